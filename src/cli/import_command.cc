// migserve import parvagpu DIR -o FILE [--workloads-dir DIR]
#include <fmt/format.h>

#include <filesystem>

#include "cli/command.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "workload/parvagpu_import.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct ImportFlags {
  std::string dir;
  std::string output;
  std::string workloads_dir;
};

void RunImportParvaGpu(const ImportFlags& flags, CommandContext* context) {
  auto result = workload::ImportParvaGpu(flags.dir);
  if (!result.ok()) {
    context->Fail(result.status());
    return;
  }
  for (const std::string& w : result->warnings) {
    context->err << "migserve: warning: " << w << "\n";
  }
  Status s = WriteFileAtomic(flags.output,
                             profile::FormatProfileCsv(result->profiles));
  if (!s.ok()) {
    context->Fail(s);
    return;
  }
  context->err << fmt::format("import: {} profile rows -> {}\n",
                              result->profiles.rows.size(), flags.output);
  std::filesystem::path dir =
      flags.workloads_dir.empty()
          ? std::filesystem::path(flags.output).parent_path()
          : std::filesystem::path(flags.workloads_dir);
  for (size_t k = 0; k < result->scenarios.size(); ++k) {
    std::string path = (dir / fmt::format("parva-slo{}.yaml", k + 1)).string();
    std::string text = fmt::format(
        "# ParvaGPU SLO scenario {} (SLO/SLO_req_rate.csv and "
        "SLO_latency.csv row {};\n# MIT, Copyright (c) 2024 sslab6943).\n{}",
        k + 1, k + 1, workload::FormatWorkload(result->scenarios[k]));
    s = WriteFileAtomic(path, text);
    if (!s.ok()) {
      context->Fail(s);
      return;
    }
    context->err << fmt::format("import: scenario {} ({} services) -> {}\n",
                                k + 1, result->scenarios[k].services.size(),
                                path);
  }
}

}  // namespace

void SetupImport(CLI::App* app, CommandContext* context) {
  app->require_subcommand(1);
  CLI::App* parva = app->add_subcommand(
      "parvagpu",
      "ParvaGPU's A100-80GB measurements (prof_data/, SLO/) -> profile CSV "
      "and its six SLO scenarios as workloads parva-slo1..6.yaml");
  auto flags = std::make_shared<ImportFlags>();
  parva->add_option("dir", flags->dir, "ParvaGPU data directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  parva->add_option("-o,--output", flags->output, "Profile CSV to write")
      ->required();
  parva->add_option("--workloads-dir", flags->workloads_dir,
                    "Where to write the workloads (default: beside -o)");
  parva->callback([flags, context] { RunImportParvaGpu(*flags, context); });
}

}  // namespace migserve::cli
