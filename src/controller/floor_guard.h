// The level-triggered check before a delete or migrate starts: whatever
// the journal says, the last observed cluster must keep the action's
// service at its floor without the replica it removes and those the
// running actions remove (docs/controller.md). A resumed plan whose creates
// were evicted meanwhile is stopped here and replanned from what is seen.
#ifndef MIGSERVE_CONTROLLER_FLOOR_GUARD_H_
#define MIGSERVE_CONTROLLER_FLOOR_GUARD_H_

#include <map>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "controller/safety_checker.h"
#include "util/status.h"

namespace migserve::controller {

// Returns Unavailable, naming the action, the service and the numbers, if
// starting `a` now would take its service below its floor under `goal` on
// `seen` (whose ready capacity per service is `capacity`), with the
// replicas that `running` remove gone too; OK otherwise.
Status CheckFloor(const cluster::Action& a, const cluster::ClusterState& seen,
                  const std::map<std::string, double>& capacity,
                  const std::vector<const cluster::Action*>& running,
                  const TransitionGoal& goal);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_FLOOR_GUARD_H_
