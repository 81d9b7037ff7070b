#include "controller/planner.h"

#include "controller/exchange_planner.h"
#include "controller/target_mapping.h"

namespace migserve::controller {

using cluster::ClusterState;
using cluster::TransitionPlan;

TransitionGoal MakeGoal(const deployment::Deployment& from,
                        const deployment::Deployment& to) {
  TransitionGoal goal;
  for (const workload::Service& s : from.services) {
    goal.required_before[s.name] = s.throughput.value();
  }
  for (const workload::Service& s : to.services) {
    goal.required_after[s.name] = s.throughput.value();
  }
  goal.target_gpus = to.UsedGpus();
  goal.survive = to.survive;
  return goal;
}

TransitionGoal GoalFromObserved(const ClusterState& observed,
                                const deployment::Deployment& target) {
  TransitionGoal goal = MakeGoal(target, target);
  goal.required_before = observed.Capacity();
  return goal;
}

TransitionGoal GoalKeeping(const ClusterState& observed,
                           const deployment::Deployment& target,
                           const std::map<std::string, double>& before) {
  TransitionGoal goal = MakeGoal(target, target);
  goal.required_before = before;
  KeepWhatIsLeft(observed.Capacity(), &goal);
  return goal;
}

StatusOr<TransitionPlan> PlanTransition(const ClusterState& current,
                                        const deployment::Deployment& target,
                                        const TransitionGoal& goal,
                                        const PlannerOptions& options) {
  MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts desired, MapTarget(current, target));
  return exchange::Planner(current, std::move(desired), goal, options).Run();
}

StatusOr<PlannedTransition> PlanSurvivingIfPossible(
    const ClusterState& current, const deployment::Deployment& target,
    const TransitionGoal& goal, const PlannerOptions& options) {
  PlannedTransition out{{}, goal, {}};
  StatusOr<TransitionPlan> plan =
      PlanTransition(current, target, goal, options);
  // Whatever stopped it (no room, or no progress), the floors alone may
  // still be kept; where they cannot either, their error is the answer.
  if (!plan.ok() && goal.survive) {
    out.survive_dropped.why = plan.status().message();
    out.goal.survive.reset();
    plan = PlanTransition(current, target, out.goal, options);
  }
  if (!plan.ok()) return plan.status();
  out.plan = std::move(*plan);
  return out;
}
}  // namespace migserve::controller
