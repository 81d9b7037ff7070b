// Triton Model Analyzer's results/metrics-model-inference.csv as profile
// rows: per model, batch and instance count, the best throughput among the
// configurations and concurrencies it swept. docs/formats.md describes the
// columns read and how each row is computed.
#ifndef MIGSERVE_PROFILE_MODEL_ANALYZER_IMPORT_H_
#define MIGSERVE_PROFILE_MODEL_ANALYZER_IMPORT_H_

#include <optional>
#include <string>
#include <string_view>

#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::profile {

struct ModelAnalyzerOptions {
  // Model Analyzer does not know the MIG instance it measured on.
  std::string gpu;
  std::string profile;
  std::string model;  // only this model's rows; empty: every model
  // Only points whose p99 latency is within this many ms count.
  std::optional<double> latency_limit_ms;
};

// Converts the file's text (`path` names it). A row's procs is the GPU
// instance count of its Instance Group ("2:GPU" -> 2). Its batch is the
// batch the server ran: the client's Batch, or, where the file's Max Batch
// Size is larger (the server batches dynamically, as Model Analyzer's
// configurations do), the client batch times the requests in flight per
// instance (Concurrency / instances, rounded), at most Max Batch Size; so a
// sweep of client batch 1 gives a row per server batch. Throughput is
// Throughput (infer/sec) (samples/s) at the chosen point; latency_ms is the
// batch time at the lowest concurrency of the group: Avg Latency (ms) when
// the file has it, else busy instances x batch x 1000 / throughput
// (Little's law for the closed loop perf_analyzer runs, to the
// microsecond). p90 and p99 are kept. Warns when rows of client batch 1
// come without Max Batch Size.
StatusOr<ImportedProfiles> ImportModelAnalyzerCsv(
    std::string_view text, const std::string& path,
    const ModelAnalyzerOptions& options);

StatusOr<ImportedProfiles> ImportModelAnalyzer(
    const std::string& path, const ModelAnalyzerOptions& options);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_MODEL_ANALYZER_IMPORT_H_
