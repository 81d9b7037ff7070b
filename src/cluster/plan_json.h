// The plan JSON of DESIGN 6, written by `plan` and read back by tests and
// the controller's journal.
#ifndef MIGSERVE_CLUSTER_PLAN_JSON_H_
#define MIGSERVE_CLUSTER_PLAN_JSON_H_

#include <string>

#include "cluster/action.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::cluster {

// Returns the plan as indented JSON with a trailing newline.
std::string FormatPlan(const TransitionPlan& plan, const mig::GpuModel& gpu);

// Parses a plan for GPUs of model `gpu`. Returns InvalidArgument naming
// `source` and the field path (`actions[3].to.profile: ...`) for a missing or
// mistyped field, an unknown kind or profile, a duplicated id, or an `after`
// naming an action not listed before.
StatusOr<TransitionPlan> ParsePlan(const std::string& text,
                                   const std::string& source,
                                   const mig::GpuModel& gpu);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_PLAN_JSON_H_
