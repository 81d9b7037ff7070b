// LLM benchmark results as measurements (llm_measurement.h): one row per
// file, from
// - vLLM's `vllm bench serve --save-result` (benchmarks/
//   benchmark_serving.py) JSON: request_throughput, total_input_tokens,
//   total_output_tokens over completed, median_ttft_ms, median_tpot_ms,
//   output_throughput; GPU and profile from `--metadata gpu=G profile=P`
//   or the flags;
// - NVIDIA AIPerf's profile_export_aiperf.json and genai-perf's
//   profile_export_genai_perf.json: the p50 of time_to_first_token and
//   inter_token_latency, the mean and spread of input_sequence_length and
//   output_sequence_length, request_throughput, output_token_throughput.
// docs/formats.md, "LLM measurements", says what is read and refused.
#ifndef MIGSERVE_LLM_BENCH_IMPORT_H_
#define MIGSERVE_LLM_BENCH_IMPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "llm/llm_measurement.h"
#include "util/status_or.h"

namespace migserve::llm {

// What the files may not say. Empty: from the file (the model: its id
// after the last '/', in lower case).
struct BenchImportOptions {
  std::string model;
  std::string gpu;
  std::string profile;
};

enum class BenchFormat { kVllm, kAiperf };

struct ImportedRuns {
  std::vector<LlmMeasurement> rows;
  std::vector<std::string> warnings;
};

// One file's text (`path` names it in errors and becomes the row's
// source). InvalidArgument "PATH: FIELD: reason" for what is missing or
// unusable: no completed request, all requests sent at once (vLLM's
// `--request-rate inf` without `--max-concurrency`), a unit it does not
// know, no GPU or profile.
StatusOr<LlmMeasurement> ImportBenchResult(BenchFormat format,
                                           std::string_view text,
                                           const std::string& path,
                                           const BenchImportOptions& options,
                                           std::vector<std::string>* warnings);

// Reads and converts each file.
StatusOr<ImportedRuns> ImportBenchResults(BenchFormat format,
                                          const std::vector<std::string>& paths,
                                          const BenchImportOptions& options);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_BENCH_IMPORT_H_
