// What `report` draws from other commands' JSON that no lower room types:
// compare's rows (`compare --format json`) and the rates a day received.
// The parser names the file and field of what is wrong, so that drawing
// never meets a malformed input.
#ifndef MIGSERVE_REPORT_REPORT_INPUTS_H_
#define MIGSERVE_REPORT_REPORT_INPUTS_H_

#include <optional>
#include <string>
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

// The rates the services received: rates[k][s] is services[s]'s rate
// (req/s) from times_s[k] until times_s[k + 1]; the last moment is the end.
struct ObservedRates {
  std::vector<std::string> services;
  std::vector<double> times_s;
  std::vector<std::vector<double>> rates;
};

// Parses what `compare --format json` writes, read from `source`. Returns
// InvalidArgument naming the source and the field. (`serve --format json`
// and `replay --format json` are read by their own rooms:
// serving/serve_json.h, autoscale/replay_json.h.)
StatusOr<std::vector<ComparedRow>> ParseCompareJson(const std::string& text,
                                                    const std::string& source);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_REPORT_INPUTS_H_
