// Checks DESIGN 6's safety property of a transition plan for EVERY execution
// order its DAG allows, not one timeline:
//  - each service's ready capacity stays >= its floor, min(required before,
//    required after): per service, the worst reachable moment is a
//    minimum-weight closure over the DAG (each action split into "started"
//    and "finished"), found by one minimum cut;
//  - with survive, each service's capacity outside any one failure domain
//    stays >= what it keeps after a loss (KeptAfterLoss): one minimum cut
//    per service and domain it touches, the domain's actions left out;
//  - actions that touch the same instance (or the same GPU's layout) are
//    ordered by the DAG, so every order sees the same sequence per GPU, and
//    that sequence is checked action by action: instances exist, a
//    repartition touches no replica, every intermediate layout is legal;
//  - at the end every service meets its new requirement on at most the
//    target's GPU count, and every other GPU serves nothing.
#ifndef MIGSERVE_CONTROLLER_SAFETY_CHECKER_H_
#define MIGSERVE_CONTROLLER_SAFETY_CHECKER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "mig/gpu_model.h"
#include "workload/workload.h"

namespace migserve::controller {

// What a transition must keep and reach, per service (by name).
struct TransitionGoal {
  std::map<std::string, double> required_before;
  std::map<std::string, double> required_after;
  int target_gpus = 0;  // GPUs that may serve replicas at the end
  // The target's survive: after losing any one failure domain at any moment
  // of the transition, each service keeps KeptAfterLoss; none: a loss may
  // take a service below its floor until the controller replans.
  std::optional<workload::Survive> survive;

  // Returns min(required before, required after); 0 for a service only one
  // side has.
  double Floor(const std::string& service) const;
};

// The failure domain of `gpu`: the GPU ("node/index") or its node.
std::string DomainOf(const cluster::GpuId& gpu, workload::FailureDomain domain);

// Per service: its capacity in each failure domain of `state`.
std::map<std::string, std::map<std::string, double>> CapacityByDomain(
    const cluster::ClusterState& state, workload::FailureDomain domain);

// Per service of `goal` with a floor, when the goal has survive: the rate
// it keeps after losing any one domain at any moment of a transition from
// `initial`: keep x its floor, or what `initial` keeps after its worst loss
// where that is less (a cluster that does not survive a loss yet keeps what
// it has, as the floors do after a loss). Empty without survive.
std::map<std::string, double> KeptAfterLoss(
    const cluster::ClusterState& initial, const TransitionGoal& goal);

// Lowers the "before" requirement of each service whose `capacity` is
// below its floor to that capacity (a loss took the rest: it keeps what it
// has); returns those services.
std::vector<std::string> KeepWhatIsLeft(
    const std::map<std::string, double>& capacity, TransitionGoal* goal);

struct SafetyReport {
  std::vector<std::string> problems;  // empty: safe
  // Per service: the lowest capacity any execution order reaches.
  std::map<std::string, double> worst_capacity;
  // With survive, per service: the lowest capacity outside one failure
  // domain that any execution order reaches (over its domains).
  std::map<std::string, double> worst_after_loss;
  bool ok() const { return problems.empty(); }
};

// Returns why `state` is not a finished transition to `goal` (a service
// below its new requirement, more serving GPUs than the target), or nothing.
std::vector<std::string> EndStateProblems(const cluster::ClusterState& state,
                                          const TransitionGoal& goal);

// Returns the report for running `plan` on `initial`.
SafetyReport CheckPlan(const cluster::ClusterState& initial,
                       const cluster::TransitionPlan& plan,
                       const TransitionGoal& goal);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_SAFETY_CHECKER_H_
