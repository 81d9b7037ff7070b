#include "controller/controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "cluster/plan_json.h"
#include "controller/floor_guard.h"
#include "controller/goal_json.h"
#include "controller/route_keeper.h"
#include "deployment/deployment_json.h"
#include "util/tolerance.h"

namespace migserve::controller {

using cluster::Action;
using cluster::TransitionPlan;

StatusOr<int> Controller::MakePlan(const deployment::Deployment& target,
                                   const std::string& target_json,
                                   TransitionGoal* goal, int first_id,
                                   TransitionPlan* plan) {
  auto begin = std::chrono::steady_clock::now();
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed,
                            backend_->Observe());
  PlannerOptions planner = options_.planner;
  planner.first_id = first_id;
  MIGSERVE_ASSIGN_OR_RETURN(
      PlannedTransition planned,
      PlanSurvivingIfPossible(observed, target, *goal, planner));
  *plan = std::move(planned.plan);
  *goal = std::move(planned.goal);
  SafetyReport report = CheckPlan(observed, *plan, *goal);
  stats_.planner_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  if (!report.ok()) {
    return Status::Internal("the planner made an unsafe plan: " +
                            report.problems.front());
  }
  if (planned.survive_dropped.dropped()) {
    stats_.survive_dropped = planned.survive_dropped;
    Progress("controller: " + planned.survive_dropped.Sentence());
  }
  ++stats_.plans;
  Progress(fmt::format("controller: plan {} with {} actions", stats_.plans,
                       plan->actions.size()));
  return journal_->BeginPlan(target_json, cluster::FormatPlan(*plan),
                             FormatGoal(*goal));
}

StatusOr<TransitionGoal> Controller::AfterLoss(const TransitionGoal& goal) {
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed,
                            backend_->Observe());
  std::map<std::string, double> capacity = observed.Capacity();
  TransitionGoal kept = goal;
  for (const std::string& service : KeepWhatIsLeft(capacity, &kept)) {
    Progress(fmt::format(
        "controller: service {} is short: {:.6g} of {:.6g} req/s after a "
        "loss; keeping what it has",
        service, capacity[service], goal.Floor(service)));
    if (std::find(stats_.short_services.begin(), stats_.short_services.end(),
                  service) == stats_.short_services.end()) {
      stats_.short_services.push_back(service);
    }
  }
  return kept;
}

Status Controller::GuardRemoval(
    const Action& a, const cluster::ClusterState& seen,
    const std::map<std::string, double>& capacity,
    const std::vector<const Action*>& removing) const {
  if (settling_) {
    return Status::Unavailable(fmt::format(
        "held: action {} ({} of {}) removes nothing while the controller "
        "replans after a failure or a loss",
        a.id, cluster::KindName(a.kind), a.replica.service));
  }
  return CheckFloor(a, seen, capacity, removing, stats_.goal, promised_);
}

Status Controller::Transition(const deployment::Deployment& target,
                              const TransitionGoal& goal) {
  // Every write that removes a replica, running actions' included, is
  // checked against the floors in force on the cluster as it is then.
  backend_->SetRemovalGuard(
      [this](const Action& a, const cluster::ClusterState& seen,
             const std::map<std::string, double>& capacity,
             const std::vector<const Action*>& removing) {
        return GuardRemoval(a, seen, capacity, removing);
      });
  struct Unguard {
    cluster::ClusterBackend* backend;
    ~Unguard() { backend->SetRemovalGuard({}); }
  } unguard{backend_};
  settling_ = false;
  std::string target_json = deployment::FormatDeployment(target);
  MIGSERVE_ASSIGN_OR_RETURN(std::optional<JournaledPlan> current,
                            journal_->Current());
  TransitionPlan plan;
  int version = 0;
  std::map<int, ActionState> states;
  TransitionGoal current_goal = goal;
  stats_.goal = goal;  // what a recovery keeps if no plan is made
  if (current && current->target == target_json) {
    // Resumed with the floors it was made for (a restarted process cannot
    // tell them from the cluster half way); a damaged plan is not trusted.
    std::string where = fmt::format("plan {}", current->version);
    auto journaled = cluster::ParsePlan(current->plan_json, where);
    if (!journaled.ok()) {
      return Journal::Damaged(journaled.status().message());
    }
    plan = std::move(*journaled);
    if (!current->goal_json.empty()) {
      auto kept = ParseGoal(current->goal_json, where + " goal");
      if (!kept.ok()) return Journal::Damaged(kept.status().message());
      current_goal = std::move(*kept);
    }
    version = current->version;
    states = current->actions;
    promised_ = current_goal;  // the floors the journaled plan was made for
    Progress(fmt::format("controller: resuming plan {} ({} actions journaled)",
                         version, states.size()));
  } else {
    promised_ = goal;
    if (current)
      MIGSERVE_RETURN_IF_ERROR(journal_->FinishPlan(current->version));
    MIGSERVE_ASSIGN_OR_RETURN(
        version, MakePlan(target, target_json, &current_goal, 0, &plan));
  }
  for (int replans = 0;; ++replans) {
    stats_.goal = current_goal;
    Status run = Execute(version, plan, states, current_goal);
    if (run.ok()) {
      MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState end, backend_->Observe());
      std::vector<std::string> missing = EndStateProblems(end, current_goal);
      if (missing.empty()) return journal_->FinishPlan(version);
      run = Status::Unavailable("the plan ran but " + missing.front());
    }
    if (run.code() == Status::Code::kAborted ||
        replans >= options_.max_replans) {
      return run;
    }
    // Nothing not yet written is removed from here on: the running actions
    // end (a migration whose source is still serving ends failed, both
    // replicas kept), and the next plan starts from what is left.
    settling_ = true;
    Status settled = AwaitRunning(backend_, journal_, version);
    settling_ = false;
    MIGSERVE_RETURN_IF_ERROR(settled);
    // A controller that may no longer act (its lease lost) stops here,
    // its plan journaled for whoever holds the lease now.
    MIGSERVE_RETURN_IF_ERROR(MayAct());
    Progress("controller: " + run.message() + "; replanning");
    MIGSERVE_RETURN_IF_ERROR(journal_->FinishPlan(version));
    int next_id = 0;
    for (const Action& a : plan.actions) next_id = std::max(next_id, a.id + 1);
    // From the transition's own floors, each lowered to what its service
    // has now where a loss left it short: a service whose capacity came
    // back gets its whole floor again.
    MIGSERVE_ASSIGN_OR_RETURN(current_goal, AfterLoss(promised_));
    current_goal.survive = goal.survive;  // a plan that dropped it tries again
    MIGSERVE_ASSIGN_OR_RETURN(
        version, MakePlan(target, target_json, &current_goal, next_id, &plan));
    states.clear();
  }
}

// The controller's guards and route keeping around each action of one
// plan's run.
class Controller::Hooks : public ExecutionHooks {
 public:
  Hooks(Controller* controller, int version, const TransitionPlan& plan,
        const TransitionGoal& goal)
      : controller_(controller),
        goal_(goal),
        routes_(controller->options_.router, controller->journal_, version,
                plan) {}

  Status MayAct() override { return controller_->MayAct(); }
  Status Begin(const cluster::ClusterState& observed,
               const std::vector<const Action*>& started) override {
    return routes_.Begin(observed, started);
  }
  Status Guard(const Action& a, const cluster::ClusterState& seen,
               const std::map<std::string, double>& capacity,
               const std::vector<const Action*>& running) override {
    MIGSERVE_RETURN_IF_ERROR(
        CheckFloor(a, seen, capacity, running, goal_, controller_->promised_));
    // What the route carries once `a` starts: a group someone thinned
    // leaves the route in the same write (RouteKeeper::Starting).
    return CheckRoutedFloor(a, seen, routes_.RoutedAfter(a, seen), capacity,
                            goal_, controller_->promised_);
  }
  Status Starting(const Action& a, const cluster::ClusterState& seen) override {
    return routes_.Starting(a, seen);
  }
  Status Finished(const Action& a, const cluster::ClusterState& seen) override {
    return routes_.Finished(a, seen);
  }

  int route_changes() const { return routes_.changes(); }

 private:
  Controller* controller_;
  const TransitionGoal& goal_;
  RouteKeeper routes_;
};

Status Controller::Execute(int version, const TransitionPlan& plan,
                           const std::map<int, ActionState>& states,
                           const TransitionGoal& goal) {
  Hooks hooks(this, version, plan, goal);
  PlanExecutor executor(
      backend_, journal_,
      {options_.stop_after, options_.progress, options_.progress_every_s});
  Status run = executor.Run(version, plan, states, &hooks);
  stats_.actions_run += executor.actions_run();
  stats_.route_changes += hooks.route_changes();
  return run;
}

Status Controller::MayAct() {
  if (options_.may_act) {
    Status allowed = options_.may_act();
    if (!allowed.ok()) return Status::Aborted(allowed.message());
  }
  if (options_.superseded && options_.superseded()) {
    stats_.superseded = true;
    return Status::Aborted(
        "the target changed; stopping to move to the new one");
  }
  return Status::Ok();
}

}  // namespace migserve::controller
