// What `report` draws from other commands' JSON, typed: compare's rows
// (`compare --format json`) and serve's latencies per service (`serve
// --format json`). The parsers name the file and field of what is wrong,
// so that drawing never meets a malformed input.
#ifndef MIGSERVE_REPORT_REPORT_INPUTS_H_
#define MIGSERVE_REPORT_REPORT_INPUTS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/status_or.h"

namespace migserve::report {

// One row of `compare`: an algorithm's GPUs (none if it cannot serve the
// workload) and status, or a bound.
struct ComparedRow {
  std::string name;
  bool bound = false;
  std::optional<double> gpus;
  std::string status;
  std::string note;
};

// One service of `serve`: its request latencies by quantile (p50, p90,
// p99, in that order) against its SLO, milliseconds.
struct ServedService {
  std::string service;
  std::vector<std::pair<std::string, double>> latency_ms;
  double slo_ms = 0;
  double within_slo = 0;  // share of requests within the SLO
};

// Parse what `compare --format json` and `serve --format json` write, read
// from `source`. Return InvalidArgument naming the source and the field.
StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source);
StatusOr<std::vector<ServedService>> ParseServeJson(const std::string& text,
                                                    const std::string& source);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_REPORT_INPUTS_H_
