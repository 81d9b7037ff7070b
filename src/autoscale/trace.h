// A request-rate trace (`migserve replay --trace`): CSV with the header
// `time_s,service,rate`, each row a service's observed rate (req/s) from
// `time_s` on, until that service's next row. Every service has a row at
// the trace's first moment; the trace ends at its last moment, whose rows
// only mark the end. docs/autoscale.md says how to turn a Prometheus export
// into one.
#ifndef MIGSERVE_AUTOSCALE_TRACE_H_
#define MIGSERVE_AUTOSCALE_TRACE_H_

#include <string>
#include <string_view>
#include <vector>

#include "util/status_or.h"

namespace migserve::autoscale {

struct RateTrace {
  std::string source;                 // the file, for messages
  std::vector<std::string> services;  // in order of first appearance
  std::vector<int> lines;             // each service's first line
  // The moments at which some rate changes, ascending; the last is the end.
  std::vector<double> times_s;
  // rates[k][s]: service s's rate from times_s[k] until times_s[k + 1].
  std::vector<std::vector<double>> rates;

  double start_s() const { return times_s.front(); }
  double end_s() const { return times_s.back(); }
  // Index of `service`, or -1.
  int Find(std::string_view service) const;
  // The step in force at `time_s` (the last moment <= it; 0 before the
  // first).
  size_t StepAt(double time_s) const;
};

// Parses a trace from `text` (`source` names it in messages). Returns
// InvalidArgument "SOURCE:LINE: FIELD: reason" for a missing column, a
// field that is not a finite number >= 0, a moment earlier than the row
// before it, a service given twice at one moment, or "SOURCE: service S has
// no rate at the first moment T"; a trace needs two moments.
StatusOr<RateTrace> ParseRateTrace(std::string_view text,
                                   const std::string& source);
StatusOr<RateTrace> LoadRateTrace(const std::string& path);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_TRACE_H_
