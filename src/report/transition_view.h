// A transition as `simulate --report` recorded it: a timeline with one bar
// per action, each service's ready capacity over time against its floor,
// and what moved where.
#ifndef MIGSERVE_REPORT_TRANSITION_VIEW_H_
#define MIGSERVE_REPORT_TRANSITION_VIEW_H_

#include <string>

#include "cluster/transition_report.h"
#include "report/svg.h"

namespace migserve::report {

// One row per action in start order, a bar from start_s to end_s coloured
// by kind: <rect class="action" data-id data-kind data-service>.
std::string TimelineView(const cluster::TransitionReport& simulation);

// Per service, its capacity (a step line) against its floor (dashed) from
// the report's capacity_history and services: <svg class="capacity"
// data-service data-lowest data-floor>.
std::string CapacityView(const cluster::TransitionReport& simulation,
                         const Palette& palette);

// A table of the migrations (service, from, to) and repartitioned GPUs.
std::string MovesView(const cluster::TransitionReport& simulation);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_TRANSITION_VIEW_H_
