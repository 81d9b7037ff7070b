// The replay report as JSON (docs/formats.md, "Replay report JSON"), both
// ways: what `replay --format json` writes and what `report --replay`
// reads, in one place beside the report's type.
#ifndef MIGSERVE_AUTOSCALE_REPLAY_JSON_H_
#define MIGSERVE_AUTOSCALE_REPLAY_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "autoscale/replay.h"
#include "util/status_or.h"

namespace migserve::autoscale {

nlohmann::json ReplayJson(const ReplayReport& report);

// Reads what ReplayJson writes, from `source`. Returns InvalidArgument
// naming the source and the field at fault, a sample whose capacities do
// not match the services, or moments out of order.
StatusOr<ReplayReport> ParseReplayJson(const std::string& text,
                                       const std::string& source);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_REPLAY_JSON_H_
