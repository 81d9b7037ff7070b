// Measurements of LLM replicas on MIG slices (docs/llm.md, "Calibration"):
// one row per benchmark run of one model on one profile of one GPU, at one
// request rate, as `migserve import vllm-bench` and `import aiperf` write
// them from vLLM's and AIPerf's (or genai-perf's) result files. A
// workload's `llm_measurements: FILE` names such a file; its rows correct
// the capacity model's decode and prefill times (calibration.h).
//
// The CSV's columns, by header: model, gpu, profile, request_rate (req/s
// achieved), prompt_tokens, output_tokens (means), prompt_cv, output_cv
// (optional, 0: all alike), ttft_p50_ms, tpot_p50_ms, output_tokens_per_s,
// source (the file it came from; optional).
#ifndef MIGSERVE_LLM_LLM_MEASUREMENT_H_
#define MIGSERVE_LLM_LLM_MEASUREMENT_H_

#include <string>
#include <vector>

#include "util/status_or.h"

namespace migserve::llm {

struct LlmMeasurement {
  std::string model;        // a name of the LLM model table
  std::string gpu;          // a GPU table's name or alias
  std::string profile;      // as the GPU's table names it, e.g. 3g.40gb
  double request_rate = 0;  // req/s the replica served
  double prompt_tokens = 0, output_tokens = 0;
  double prompt_cv = 0, output_cv = 0;
  double ttft_p50_ms = 0;  // median time to first token
  double tpot_p50_ms = 0;  // median time per output token after the first
  double output_tokens_per_s = 0;
  std::string source;
  int line = 0;  // in its CSV; 0 if made in memory

  bool operator==(const LlmMeasurement&) const = default;
};

// The most runs one measurement file holds: each is calibrated by a
// token-level simulation (about 10 ms), and a model's slice needs a few
// (lengths, rates), not thousands (issue 92: 5,000 rows ran for minutes).
inline constexpr size_t kMaxLlmMeasurementRows = 1000;

// Parses the CSV `text` from `source`: InvalidArgument "SOURCE:LINE:
// COLUMN: reason" for the first field wrong (every number finite and in the
// range of what it measures; names plain), or naming the limit for a file
// of more than kMaxLlmMeasurementRows runs.
StatusOr<std::vector<LlmMeasurement>> ParseLlmMeasurements(
    std::string_view text, const std::string& source);
StatusOr<std::vector<LlmMeasurement>> LoadLlmMeasurements(
    const std::string& path);

// The CSV of `rows`, which ParseLlmMeasurements reads back.
std::string FormatLlmMeasurements(const std::vector<LlmMeasurement>& rows);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_MEASUREMENT_H_
