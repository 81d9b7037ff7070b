// The plan JSON of DESIGN 6, written by `plan` and read back by tests and
// the controller's journal. Every GPU an action touches is named by its
// node and index; the top-level "gpus" lists each one's model, so a plan
// reads on its own:
//   {"gpus": [{"node": "gpu-a1", "index": 5, "gpu": "A100-SXM4-80GB"}],
//    "actions": [{"id": 0, "kind": "create", "node": "gpu-a1", "index": 5,
//                 "profile": "3g.40gb", "start": 4, "service": "bert", ...}]}
#ifndef MIGSERVE_CLUSTER_PLAN_JSON_H_
#define MIGSERVE_CLUSTER_PLAN_JSON_H_

#include <string>

#include "cluster/action.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::cluster {

// Returns the plan as indented JSON with a trailing newline.
std::string FormatPlan(const TransitionPlan& plan);

// Parses a plan; GPU models are resolved in the default catalog. Returns
// InvalidArgument naming `source` and the field path (`actions[3].to.profile:
// ...`) for a missing or mistyped field, an unknown kind, model or profile, a
// GPU missing from "gpus", a duplicated id, or an `after` naming an action
// not listed before.
StatusOr<TransitionPlan> ParsePlan(const std::string& text,
                                   const std::string& source);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_PLAN_JSON_H_
