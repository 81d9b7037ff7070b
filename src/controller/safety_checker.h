// Checks DESIGN 6's safety property of a transition plan for EVERY execution
// order its DAG allows, not one timeline:
//  - each service's ready capacity stays >= its floor, min(required before,
//    required after): per service, the worst reachable moment is a
//    minimum-weight closure over the DAG (each action split into "started"
//    and "finished"), found by one minimum cut;
//  - actions that touch the same instance (or the same GPU's layout) are
//    ordered by the DAG, so every order sees the same sequence per GPU, and
//    that sequence is checked action by action: instances exist, a
//    repartition touches no replica, every intermediate layout is legal;
//  - at the end every service meets its new requirement on at most the
//    target's GPU count, and every other GPU serves nothing.
#ifndef MIGSERVE_CONTROLLER_SAFETY_CHECKER_H_
#define MIGSERVE_CONTROLLER_SAFETY_CHECKER_H_

#include <map>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "mig/gpu_model.h"

namespace migserve::controller {

// What a transition must keep and reach, per service (by name).
struct TransitionGoal {
  std::map<std::string, double> required_before;
  std::map<std::string, double> required_after;
  int target_gpus = 0;  // GPUs that may serve replicas at the end

  // Returns min(required before, required after); 0 for a service only one
  // side has.
  double Floor(const std::string& service) const;
};

// Lowers the "before" requirement of each service whose `capacity` is
// below its floor to that capacity (a loss took the rest: it keeps what it
// has); returns those services.
std::vector<std::string> KeepWhatIsLeft(
    const std::map<std::string, double>& capacity, TransitionGoal* goal);

struct SafetyReport {
  std::vector<std::string> problems;  // empty: safe
  // Per service: the lowest capacity any execution order reaches.
  std::map<std::string, double> worst_capacity;
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
