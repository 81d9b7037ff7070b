// A transition as `simulate --report` recorded it: a timeline with one bar
// per action, each service's ready capacity over time against its floor,
// and what moved where.
#ifndef MIGSERVE_REPORT_TRANSITION_VIEW_H_
#define MIGSERVE_REPORT_TRANSITION_VIEW_H_

#include <nlohmann/json.hpp>
#include <string>

#include "report/svg.h"

namespace migserve::report {

// One row per action in start order, a bar from start_s to end_s coloured
// by kind: <rect class="action" data-id data-kind data-service>. Throws
// nlohmann::json::exception on a malformed report.
std::string TimelineView(const nlohmann::json& simulation);

// Per service, its capacity (a step line) against its floor (dashed) from
// the report's capacity_history and services: <svg class="capacity"
// data-service data-lowest data-floor>.
std::string CapacityView(const nlohmann::json& simulation,
                         const Palette& palette);

// A table of the migrations (service, from, to) and repartitioned GPUs.
std::string MovesView(const nlohmann::json& simulation);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_TRANSITION_VIEW_H_
