// `optimize --from`: the transition-aware target of a running cluster, put
// on the cluster's GPUs so that the planner keeps what the optimizer kept,
// and what any target costs the cluster as the planner maps it.
#ifndef MIGSERVE_CONTROLLER_TRANSITION_TARGET_H_
#define MIGSERVE_CONTROLLER_TRANSITION_TARGET_H_

#include "cluster/cluster_state.h"
#include "deployment/deployment.h"
#include "optimizer/milp/transition_optimizer.h"
#include "optimizer/problem.h"
#include "profile/profile_table.h"
#include "util/status_or.h"

namespace migserve::controller {

// Returns what moving `current` to `target` takes as the planner maps it
// (MapTarget): the target's serving GPUs, the replicas it starts (created
// or migrated), the GPUs whose layout changes and the replicas that stay.
// Returns MapTarget's errors.
StatusOr<deployment::TransitionCost> CostOfTransition(
    const cluster::ClusterState& current, const deployment::Deployment& target);

// The GPUs a move from `current` to `target` may hold at once: those
// serving in either, by node and index (the controller's exchange and
// compact uses no other). What a GPU budget must hold while it runs.
int GpusHeld(const cluster::ClusterState& current,
             const deployment::Deployment& target);

// Where OptimizeFromCurrent puts the GPUs it partitions anew.
struct TargetPlacement {
  int gpus_per_node = 8;  // of new GPUs' nodes (UnplacedGpuId)
  // The most GPUs the move may hold while it runs (GpusHeld); 0: no limit.
  int max_gpus_held = 0;
};

// Returns the transition-aware deployment of `problem` from the cluster
// `current` (optimizer/transition_optimizer.h), placed: a GPU whose layout
// is kept stays where it is; a newly partitioned one goes to a GPU of the
// cluster without replicas (one with its layout first) while the GPUs the
// move holds stay within `placement`'s limit, else to one whose replicas
// all go; past those, to a new GPU named as UnplacedGpuId names them
// (node-<k / gpus_per_node>, so `plan --nodes` or an inventory provides
// it). A replica of a service of the workload can be kept when its own
// measured point (model, profile, batch, processes) in `profiles` may serve
// the service; it then stays as it is and counts, in the model and in the
// result, with the lower of its throughput now and that point's capacity at
// the service's new rate (so that the planner keeps it). The
// summary has the milp's fields and pod_starts, repartitioned_gpus,
// kept_replicas (counted as the planner maps the result), starts_bound,
// extra_gpus and `plain_optimum`, the same figures for the plain milp result.
// With survive the target is the surviving optimum, placed to keep what it
// can (no phase 2); for {domain: node} spread over the cluster's nodes
// (new ones, node-<k> of placement.gpus_per_node, only for what those cannot
// hold), each config on a GPU of its node. Returns InvalidArgument naming the
// GPU when a current GPU is not of the problem's model; FailedPrecondition when
// no deployment is found.
StatusOr<deployment::Deployment> OptimizeFromCurrent(
    const cluster::ClusterState& current, const optimizer::Problem& problem,
    const profile::ProfileTable& profiles,
    const optimizer::SolveOptions& options,
    const optimizer::milp::TransitionOptions& transition,
    const TargetPlacement& placement);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_TRANSITION_TARGET_H_
