// Triton perf_analyzer's `-f out.csv` files as profile rows: one row per
// file, at one operating point of its concurrency (or request-rate) sweep.
// docs/formats.md describes the columns read and how each row is computed.
#ifndef MIGSERVE_PROFILE_PERF_ANALYZER_IMPORT_H_
#define MIGSERVE_PROFILE_PERF_ANALYZER_IMPORT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::profile {

// What a file measured. perf_analyzer's CSV says none of it: flags give it,
// or the file name MODEL__GPU__PROFILE__bBATCH[__pPROCS].csv fills in what
// the flags leave empty (0: not given).
struct PerfAnalyzerOptions {
  std::string model;
  std::string gpu;
  std::string profile;
  int batch = 0;
  int procs = 0;  // 1 when neither flag nor file name gives it
  // The row whose first column (Concurrency or Request Rate) is this value;
  // else the row of the best throughput whose p99 fits latency_limit_ms
  // (every row when it is not given).
  std::optional<double> concurrency;
  std::optional<double> latency_limit_ms;
};

// Converts one file's text (`path` names it, and its base name may fill in
// the options). Throughput is Inferences/Second (samples/s); latency_ms is
// the p50 latency of the lowest-concurrency row (one batch in flight: the
// idle batch time), and latency_p50/p90/p99_ms those of the chosen row;
// perf_analyzer's microseconds become milliseconds.
StatusOr<ProfileRow> ImportPerfAnalyzerCsv(std::string_view text,
                                           const std::string& path,
                                           const PerfAnalyzerOptions& options);

// Reads and converts each file; two files for the same (model, GPU,
// profile, batch, procs) are an error naming both. Warns for a file whose
// throughput is more than 1.5x what its processes serve one batch at a time
// at the idle batch time: the server batched dynamically (a `-b 1` sweep
// against a batching server), so the row under-credits it.
StatusOr<ImportedProfiles> ImportPerfAnalyzer(
    const std::vector<std::string>& paths, const PerfAnalyzerOptions& options);

}  // namespace migserve::profile

#endif  // MIGSERVE_PROFILE_PERF_ANALYZER_IMPORT_H_
