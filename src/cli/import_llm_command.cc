// migserve import vllm-bench FILE... [--model M --gpu G --profile P] -o FILE
// migserve import aiperf FILE... [--model M] --gpu G --profile P -o FILE
// LLM benchmark results -> LLM measurement CSV (llm/bench_import.h), which
// a workload's `llm_measurements: FILE` reads (docs/llm.md, "Calibration").
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "boundary/input_file.h"
#include "cli/command.h"
#include "llm/bench_import.h"
#include "llm/llm_measurement.h"

namespace migserve::cli {
namespace {

struct BenchFlags {
  std::vector<std::string> files;
  std::string output;
  llm::BenchImportOptions options;
};

// The rows of `output` where it exists, less those the import measured
// again (same model, GPU, profile and source file), then the import's.
StatusOr<std::vector<llm::LlmMeasurement>> Merged(
    std::vector<llm::LlmMeasurement> added, const std::string& output,
    CommandContext* context) {
  std::error_code error;
  if (output == "-" || !std::filesystem::is_regular_file(output, error)) {
    return added;
  }
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<llm::LlmMeasurement> rows,
                            llm::LoadLlmMeasurements(output));
  auto key = [](const llm::LlmMeasurement& m) {
    return std::tie(m.model, m.gpu, m.profile, m.source);
  };
  size_t before = rows.size();
  std::erase_if(rows, [&](const llm::LlmMeasurement& r) {
    return std::any_of(added.begin(), added.end(),
                       [&](const auto& a) { return key(a) == key(r); });
  });
  context->err << fmt::format(
      "import: merged into {}: {} rows kept, {} replaced\n", output,
      rows.size(), before - rows.size());
  rows.insert(rows.end(), added.begin(), added.end());
  return rows;
}

Status RunImportBench(llm::BenchFormat format, const BenchFlags& flags,
                      CommandContext* context) {
  // The output merges what it holds, but is none of the imported files.
  for (const std::string& file : flags.files) {
    std::error_code error;
    if (flags.output != "-" &&
        std::filesystem::equivalent(file, flags.output, error)) {
      return OutputIsAnInput(flags.output);
    }
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      llm::ImportedRuns runs,
      llm::ImportBenchResults(format, flags.files, flags.options));
  for (const std::string& w : runs.warnings) {
    context->err << "migserve: warning: " << w << "\n";
  }
  size_t imported = runs.rows.size();
  MIGSERVE_ASSIGN_OR_RETURN(
      std::vector<llm::LlmMeasurement> rows,
      Merged(std::move(runs.rows), flags.output, context));
  // Nothing a workload would then refuse is written (a run of no prompt
  // tokens, say).
  std::string csv = llm::FormatLlmMeasurements(rows);
  if (auto check = llm::ParseLlmMeasurements(csv, "the imported runs");
      !check.ok()) {
    return check.status().WithPrefix(
        "import: the results give a row migserve cannot use");
  }
  MIGSERVE_RETURN_IF_ERROR(context->EmitMerged(flags.output, csv));
  context->err << fmt::format("import: {} LLM runs -> {}\n", imported,
                              flags.output == "-" ? "stdout" : flags.output);
  return Status::Ok();
}

void SetupBench(CLI::App* app, CommandContext* context, const char* name,
                llm::BenchFormat format, const std::string& help,
                const char* files_help) {
  CLI::App* sub = app->add_subcommand(name, help);
  auto flags = std::make_shared<BenchFlags>();
  sub->add_option("files", flags->files, files_help)
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", flags->output,
                  "LLM measurement CSV to write (whole or not at all; - for "
                  "stdout); merged into if it exists")
      ->required();
  llm::BenchImportOptions& o = flags->options;
  sub->add_option("--model", o.model,
                  "Model table name (default: the file's model id after "
                  "the last '/', in lower case)");
  sub->add_option("--gpu", o.gpu, "GPU model measured on, e.g. H100-SXM5-80GB");
  sub->add_option("--profile", o.profile,
                  "MIG profile measured on, e.g. 3g.40gb");
  OnRun(sub, context, [flags, context, format] {
    return RunImportBench(format, *flags, context);
  });
}

}  // namespace

void SetupImportLlm(CLI::App* app, CommandContext* context) {
  SetupBench(app, context, "vllm-bench", llm::BenchFormat::kVllm,
             "vLLM `vllm bench serve --save-result` JSON -> LLM measurement "
             "CSV (docs/llm.md, \"Calibration\"), one row per file; GPU and "
             "profile from the flags or --metadata gpu=G profile=P",
             "vLLM benchmark result files");
  SetupBench(app, context, "aiperf", llm::BenchFormat::kAiperf,
             "NVIDIA AIPerf profile_export_aiperf.json or genai-perf "
             "profile_export_genai_perf.json -> LLM measurement CSV, one "
             "row per file",
             "AIPerf or genai-perf export files");
}

}  // namespace migserve::cli
