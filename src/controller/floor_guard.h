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
// starting `a` now would take its service below its floor on `seen` (whose
// ready capacity per service is `capacity`), with the replicas that
// `running` remove gone too; OK otherwise. The floor is the one `goal`
// (the plan's) sets, raised to what the service has now up to its floor
// under `promised` (the transition's own goal): where a loss lowered the
// plan's floor, a service whose capacity came back is not taken below its
// promise again, and one still short loses nothing more.
Status CheckFloor(const cluster::Action& a, const cluster::ClusterState& seen,
                  const std::map<std::string, double>& capacity,
                  const std::vector<const cluster::Action*>& running,
                  const TransitionGoal& goal, const TransitionGoal& promised);

// The same for the capacity that reaches a's service's replicas (issue
// 91): Unavailable if `a` removes a replica on `seen` and `routed`, what
// the service's route carries once `a` starts (RouteKeeper::RoutedAfter),
// is below the floor in force (as CheckFloor sets it from the service's
// ready capacity in `capacity`). A route's integer weights give each
// group its share within a ten-thousandth: so much below the floor
// passes.
Status CheckRoutedFloor(const cluster::Action& a,
                        const cluster::ClusterState& seen, double routed,
                        const std::map<std::string, double>& capacity,
                        const TransitionGoal& goal,
                        const TransitionGoal& promised);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_FLOOR_GUARD_H_
