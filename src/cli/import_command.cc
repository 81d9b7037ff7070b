// migserve import parvagpu DIR -o FILE [--workloads-dir DIR]
// migserve import perf-analyzer FILE... [--model M --gpu G --profile P
//     --batch B --procs N] [--concurrency C | --latency-limit MS] -o FILE
// migserve import model-analyzer FILE --gpu G --profile P [--model M]
//     [--latency-limit MS] -o FILE
// migserve import migperf DIR -o FILE
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "profile/migperf_import.h"
#include "profile/model_analyzer_import.h"
#include "profile/perf_analyzer_import.h"
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

// `table` as CSV, or the error of the profile reader, which would refuse
// it (a row of zero throughput or latency that a measurement gave);
// `what` names the table there.
StatusOr<std::string> UsableCsv(const profile::ProfileTable& table,
                                const std::string& what) {
  std::string csv = profile::FormatProfileCsv(table);
  if (auto check = profile::ParseProfileCsv(csv, what); !check.ok()) {
    return check.status().WithPrefix(
        "import: the measurements give a row migserve cannot use");
  }
  return csv;
}

// Writes `table` to `output` and says how many rows went there; refuses,
// writing nothing, a table that the profile reader would refuse.
Status WriteProfiles(const profile::ProfileTable& table,
                     const std::string& output, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string csv,
                            UsableCsv(table, "the imported profiles"));
  MIGSERVE_RETURN_IF_ERROR(context->Emit(output, csv));
  context->err << fmt::format("import: {} profile rows -> {}\n",
                              table.rows.size(),
                              output == "-" ? "stdout" : output);
  return Status::Ok();
}

Status RunImportParvaGpu(const ImportFlags& flags, CommandContext* context) {
  auto result = workload::ImportParvaGpu(flags.dir);
  if (!result.ok()) {
    return result.status();
  }
  for (const std::string& w : result->warnings) {
    context->err << "migserve: warning: " << w << "\n";
  }
  MIGSERVE_RETURN_IF_ERROR(
      WriteProfiles(result->profiles, flags.output, context));
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
    Status s = WriteFileAtomic(path, text);
    if (!s.ok()) {
      return s;
    }
    context->err << fmt::format("import: scenario {} ({} services) -> {}\n",
                                k + 1, result->scenarios[k].services.size(),
                                path);
  }
  return Status::Ok();
}

struct PerfAnalyzerFlags {
  std::vector<std::string> files;
  std::string output;
  profile::PerfAnalyzerOptions options;
};

struct ModelAnalyzerFlags {
  std::string file;
  std::string output;
  profile::ModelAnalyzerOptions options;
};

// Merges `imported` into the profile CSV `output`: its rows stay, but for
// those measured again (same model, GPU, profile, batch and processes),
// which the import's replace; says how many of each.
Status MergeProfiles(const profile::ProfileTable& imported,
                     const std::string& output, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable table,
                            profile::LoadProfileCsv(output));
  auto key = [](const profile::ProfileRow& r) {
    return std::tie(r.model, r.gpu, r.profile, r.batch, r.procs);
  };
  const std::vector<profile::ProfileRow>& added = imported.rows;
  int replaced = 0;
  std::erase_if(table.rows, [&](const profile::ProfileRow& r) {
    bool again = std::any_of(added.begin(), added.end(),
                             [&](const auto& a) { return key(a) == key(r); });
    replaced += again;
    return again;
  });
  const size_t kept = table.rows.size();
  table.rows.insert(table.rows.end(), added.begin(), added.end());
  MIGSERVE_ASSIGN_OR_RETURN(std::string csv,
                            UsableCsv(table, "the merged profiles"));
  // Written in place on purpose: the output is this import's base.
  MIGSERVE_RETURN_IF_ERROR(WriteFileAtomic(output, csv));
  context->err << fmt::format(
      "import: merged into {}: {} rows kept, {} replaced, {} new\n", output,
      kept, replaced, added.size() - replaced);
  return Status::Ok();
}

// Says an importer's warnings, then writes its table, or returns its error.
// With `merge`, into the profile CSV `output` if it exists (MergeProfiles):
// one run per MIG profile builds one table.
Status WriteImported(const StatusOr<profile::ImportedProfiles>& result,
                     const std::string& output, CommandContext* context,
                     bool merge = false) {
  if (!result.ok()) return result.status();
  for (const std::string& w : result->warnings) {
    context->err << "migserve: warning: " << w << "\n";
  }
  std::error_code error;
  if (!merge || output == "-" ||
      !std::filesystem::is_regular_file(output, error)) {
    return WriteProfiles(result->profiles, output, context);
  }
  return MergeProfiles(result->profiles, output, context);
}

void AddOutput(CLI::App* app, std::string* output) {
  app->add_option("-o,--output", *output,
                  "Profile CSV to write (whole or not at all; - for stdout)")
      ->required();
}

CLI::Option* AddLatencyLimit(CLI::App* app, std::optional<double>* limit) {
  return app
      ->add_option("--latency-limit", *limit,
                   "Only points whose p99 latency is within this many ms")
      ->check(Positive());
}

void SetupImportPerfAnalyzer(CLI::App* app, CommandContext* context) {
  CLI::App* sub = app->add_subcommand(
      "perf-analyzer",
      "Triton perf_analyzer -f CSVs -> profile CSV, one row per file at "
      "the best throughput (within --latency-limit) or at --concurrency. "
      "Files named MODEL__GPU__PROFILE__bBATCH[__pPROCS].csv need no flags; "
      "merged into -o if it exists");
  auto flags = std::make_shared<PerfAnalyzerFlags>();
  profile::PerfAnalyzerOptions& o = flags->options;
  sub->add_option("files", flags->files, "perf_analyzer -f output files")
      ->required()
      ->check(CLI::ExistingFile);
  AddOutput(sub, &flags->output);
  sub->add_option("--model", o.model, "Model name (default: from file name)");
  sub->add_option("--gpu", o.gpu, "GPU model (default: from file name)");
  sub->add_option("--profile", o.profile,
                  "MIG profile measured on, e.g. 1g.10gb (default: from file "
                  "name)");
  sub->add_option("--batch", o.batch,
                  "Batch size perf_analyzer sent (-b; default: from file "
                  "name)")
      ->check(Positive());
  sub->add_option("--procs", o.procs,
                  "Server processes on the instance (default: from file "
                  "name, else 1)")
      ->check(Positive());
  auto* concurrency =
      sub->add_option("--concurrency", o.concurrency,
                      "Take the row of this concurrency (or request rate)");
  AddLatencyLimit(sub, &o.latency_limit_ms)->excludes(concurrency);
  OnRun(sub, context, [flags, context] {
    return WriteImported(
        profile::ImportPerfAnalyzer(flags->files, flags->options),
        flags->output, context, /*merge=*/true);
  });
}

void SetupImportModelAnalyzer(CLI::App* app, CommandContext* context) {
  CLI::App* sub = app->add_subcommand(
      "model-analyzer",
      "Triton Model Analyzer's results/metrics-model-inference.csv -> "
      "profile CSV: the best point per model, batch and instance count; "
      "merged into -o if it exists (one run per MIG profile)");
  auto flags = std::make_shared<ModelAnalyzerFlags>();
  profile::ModelAnalyzerOptions& o = flags->options;
  sub->add_option("file", flags->file, "metrics-model-inference.csv")
      ->required()
      ->check(CLI::ExistingFile);
  AddOutput(sub, &flags->output);
  sub->add_option("--gpu", o.gpu, "GPU model measured on")->required();
  sub->add_option("--profile", o.profile,
                  "MIG profile measured on, e.g. 1g.10gb (Model Analyzer "
                  "does not record it)")
      ->required();
  sub->add_option("--model", o.model, "Import only this model");
  AddLatencyLimit(sub, &o.latency_limit_ms);
  OnRun(sub, context, [flags, context] {
    return WriteImported(
        profile::ImportModelAnalyzer(flags->file, flags->options),
        flags->output, context, /*merge=*/true);
  });
}

void SetupImportMigPerf(CLI::App* app, CommandContext* context) {
  CLI::App* sub = app->add_subcommand(
      "migperf",
      "MIGPerf (MIGProfiler) data tree: A100-80g/..., A100-40g/... -> "
      "profile CSV");
  auto flags = std::make_shared<ImportFlags>();
  sub->add_option("dir", flags->dir, "MIGProfiler's data directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  AddOutput(sub, &flags->output);
  OnRun(sub, context, [flags, context] {
    return WriteImported(profile::ImportMigPerf(flags->dir), flags->output,
                         context);
  });
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
  AddOutput(parva, &flags->output);
  parva->add_option("--workloads-dir", flags->workloads_dir,
                    "Where to write the workloads (default: beside -o)");
  OnRun(parva, context,
        [flags, context] { return RunImportParvaGpu(*flags, context); });
  SetupImportPerfAnalyzer(app, context);
  SetupImportModelAnalyzer(app, context);
  SetupImportMigPerf(app, context);
  SetupImportLlm(app, context);
}

}  // namespace migserve::cli
