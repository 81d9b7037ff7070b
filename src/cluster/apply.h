// What an action does to the cluster, in two steps: what happens when it
// starts (a deleted or migrated replica stops counting) and when it finishes
// (a created or migrated replica counts, a repartition's layout holds).
#ifndef MIGSERVE_CLUSTER_APPLY_H_
#define MIGSERVE_CLUSTER_APPLY_H_

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "mig/gpu_model.h"
#include "util/status.h"

namespace migserve::cluster {

// Checks that `action` may start on `state` and applies its start. Returns
// FailedPrecondition naming the action and what is wrong (no such GPU or
// instance, instance busy, replica absent, repartition touching a replica or
// leading to an illegal layout, an instance of another GPU model than the
// cluster's GPU has) and leaves `state` unchanged.
Status StartAction(const Action& action, ClusterState* state);

// Applies the finish of an action whose start was applied. Returns
// FailedPrecondition (state unchanged) if its GPU or instance has gone.
Status FinishAction(const Action& action, ClusterState* state);

// StartAction then FinishAction.
Status ApplyAction(const Action& action, ClusterState* state);

// Returns true if the effect of `action` is visible in `state` (a restarted
// controller asks this of an action it started but did not see finish).
bool HasTakenEffect(const Action& action, const ClusterState& state);

// Returns "action 3 (delete bert on GPU node-0/1 1g.10gb@3)".
std::string Describe(const Action& action);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_APPLY_H_
