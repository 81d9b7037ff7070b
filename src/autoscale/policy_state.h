// What the autoscaling policy remembers beyond the rates the target states
// (docs/autoscale.md, "Across a restart"): per service, since when it has
// wanted less than its down threshold (a cool-down under way, Unix time)
// and the share of its credits that holds its SLO (a learned margin). Kept
// as JSON, by service name:
//   {"low_since": {"bert-1": 1795749037.5}, "margins": {"bert-1": 0.8}}
#ifndef MIGSERVE_AUTOSCALE_POLICY_STATE_H_
#define MIGSERVE_AUTOSCALE_POLICY_STATE_H_

#include <map>
#include <string>

#include "util/status_or.h"

namespace migserve::autoscale {

struct PolicyState {
  std::map<std::string, double> low_since;  // services low now, since when
  std::map<std::string, double> margins;    // services with a margin < 1
  bool operator==(const PolicyState&) const = default;
};

std::string FormatPolicyState(const PolicyState& state);
// Returns InvalidArgument naming `source` and the field for text that is not
// such JSON (a time or margin not a finite number, a margin outside (0, 1]).
StatusOr<PolicyState> ParsePolicyState(const std::string& text,
                                       const std::string& source);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_POLICY_STATE_H_
