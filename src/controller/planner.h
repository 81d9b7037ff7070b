// The exchange-and-compact planner (paper 6): from the cluster as it is to a
// target deployment, a DAG of create, delete, migrate and repartition
// actions that keeps every service at or above min(required before,
// required after) in every execution order (see safety_checker.h).
#ifndef MIGSERVE_CONTROLLER_PLANNER_H_
#define MIGSERVE_CONTROLLER_PLANNER_H_

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "cluster/survive_dropped.h"
#include "controller/safety_checker.h"
#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::controller {

struct PlannerOptions {
  // Move a replica within a node with one migrate (it stops counting while
  // it moves) when its service has the slack; otherwise create the new one
  // before deleting the old one.
  bool use_migrate = true;
  // Also migrate across nodes. Off by default: a remote migrate takes longer
  // than a create plus a delete and needs slack they do not
  // (docs/controller.md).
  bool remote_migrate = false;
  // First action id (a replan continues the journal's numbering).
  int first_id = 0;
};

// Returns the goal of moving from `from` to `to`: required throughputs of
// both sides, and the target's serving GPU count.
TransitionGoal MakeGoal(const deployment::Deployment& from,
                        const deployment::Deployment& to);

// Returns the goal of moving a cluster observed as `observed` (no previous
// target known) to `target`: each service keeps min(what it has now, what
// the target requires).
TransitionGoal GoalFromObserved(const cluster::ClusterState& observed,
                                const deployment::Deployment& target);

// Returns the goal of moving `observed` to `target` when each service must
// keep `before` (a previous goal's requirements), lowered to what the
// cluster has where a loss took the rest (KeepWhatIsLeft).
TransitionGoal GoalKeeping(const cluster::ClusterState& observed,
                           const deployment::Deployment& target,
                           const std::map<std::string, double>& before);

// Returns a plan that takes `current` to `target`. Each GPU keeps its
// model: target configs go only to GPUs of their model (MapTarget), and a
// replica moves (migrate, temporary copy) only between GPUs of one model.
//
// Exchange: each target GPU config is mapped onto a physical GPU
// (MapTarget); replicas already in place stay. Every missing replica is
// created on its final instance as soon as that instance's memory is free of
// replicas (a partial repartition makes it), or moved there by a migrate from
// an unneeded replica of the same size, local ones first. An unneeded
// replica is deleted once its service can lose it: from the slack above its
// floor, or paired with creates of the same service (the delete waits for
// them). Compact: when nothing can move (new instances wait for memory held
// by replicas whose services cannot lose them yet), a temporary replica of a
// blocking service is created on spare room (idle GPUs first, same node
// first) and the loop goes on; so with few spare GPUs the transition goes a
// few services at a time, in rounds (paper 6, last paragraph). Finally each
// target GPU is repartitioned to its exact target layout.
//
// Returns FailedPrecondition naming the service when the cluster has no room
// to keep it at its floor, or when the current deployment is below it.
StatusOr<cluster::TransitionPlan> PlanTransition(
    const cluster::ClusterState& current, const deployment::Deployment& target,
    const TransitionGoal& goal, const PlannerOptions& options = {});

// A plan and the goal it keeps.
struct PlannedTransition {
  cluster::TransitionPlan plan;
  TransitionGoal goal;
  // Why the plan keeps no survive promise where the goal asked for one.
  cluster::SurviveDropped survive_dropped;
};

// PlanTransition. With survive in `goal`, each service also keeps what it
// keeps after a loss (KeptAfterLoss) in every view of the cluster without
// one failure domain: a delete waits for creates outside the domains it
// would leave short, and a temporary copy goes to a domain the service is
// not in. When no such plan is found (the cluster has no room for the
// copies), returns the plan for the floors alone, its goal without
// survive, and says why; where there is none either, the floors' error.
StatusOr<PlannedTransition> PlanSurvivingIfPossible(
    const cluster::ClusterState& current, const deployment::Deployment& target,
    const TransitionGoal& goal, const PlannerOptions& options = {});

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_PLANNER_H_
