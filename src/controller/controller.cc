#include "controller/controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "cluster/apply.h"
#include "cluster/plan_json.h"
#include "controller/goal_json.h"
#include "deployment/deployment_json.h"
#include "util/tolerance.h"

namespace migserve::controller {

using cluster::Action;
using cluster::TransitionPlan;

StatusOr<int> Controller::MakePlan(const deployment::Deployment& target,
                                   const std::string& target_json,
                                   const TransitionGoal& goal, int first_id,
                                   TransitionPlan* plan) {
  auto begin = std::chrono::steady_clock::now();
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed,
                            backend_->Observe());
  PlannerOptions planner = options_.planner;
  planner.first_id = first_id;
  MIGSERVE_ASSIGN_OR_RETURN(*plan,
                            PlanTransition(observed, target, goal, planner));
  SafetyReport report = CheckPlan(observed, *plan, goal);
  stats_.planner_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  if (!report.ok()) {
    return Status::Internal("the planner made an unsafe plan: " +
                            report.problems.front());
  }
  ++stats_.plans;
  Progress(fmt::format("controller: plan {} with {} actions", stats_.plans,
                       plan->actions.size()));
  return journal_->BeginPlan(target_json, cluster::FormatPlan(*plan),
                             FormatGoal(goal));
}

StatusOr<TransitionGoal> Controller::AfterLoss(const TransitionGoal& goal) {
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed,
                            backend_->Observe());
  std::map<std::string, double> capacity = observed.Capacity();
  TransitionGoal kept = goal;
  for (auto& [service, before] : kept.required_before) {
    double floor = goal.Floor(service);
    if (capacity[service] >= floor - kCapacityTolerance) continue;
    Progress(fmt::format(
        "controller: service {} is short: {:.6g} of {:.6g} req/s after a "
        "loss; keeping what it has",
        service, capacity[service], floor));
    if (std::find(stats_.short_services.begin(), stats_.short_services.end(),
                  service) == stats_.short_services.end()) {
      stats_.short_services.push_back(service);
    }
    before = capacity[service];
  }
  return kept;
}

Status Controller::Transition(const deployment::Deployment& target,
                              const TransitionGoal& goal) {
  std::string target_json = deployment::FormatDeployment(target);
  MIGSERVE_ASSIGN_OR_RETURN(std::optional<JournaledPlan> current,
                            journal_->Current());
  TransitionPlan plan;
  int version = 0;
  std::map<int, ActionState> states;
  TransitionGoal current_goal = goal;
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
    Progress(fmt::format("controller: resuming plan {} ({} actions journaled)",
                         version, states.size()));
  } else {
    if (current)
      MIGSERVE_RETURN_IF_ERROR(journal_->FinishPlan(current->version));
    MIGSERVE_ASSIGN_OR_RETURN(version,
                              MakePlan(target, target_json, goal, 0, &plan));
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
    Progress("controller: " + run.message() + "; replanning");
    MIGSERVE_RETURN_IF_ERROR(AwaitRunning(version));
    MIGSERVE_RETURN_IF_ERROR(journal_->FinishPlan(version));
    int next_id = 0;
    for (const Action& a : plan.actions) next_id = std::max(next_id, a.id + 1);
    MIGSERVE_ASSIGN_OR_RETURN(current_goal, AfterLoss(current_goal));
    MIGSERVE_ASSIGN_OR_RETURN(
        version, MakePlan(target, target_json, current_goal, next_id, &plan));
    states.clear();
  }
}

namespace {

// Applies to `routed` the start of `a`, which may have begun on the cluster
// already (a restarted controller's action): the replica it removes is no
// longer routed either way.
void StartRouted(const Action& a, cluster::ClusterState* routed) {
  if (cluster::StartAction(a, routed).ok()) return;
  if (a.kind != cluster::ActionKind::kDelete &&
      a.kind != cluster::ActionKind::kMigrate) {
    return;
  }
  cluster::Slot* slot =
      routed->FindServing(a.at.gpu, a.at.instance, a.replica.service);
  if (slot != nullptr) slot->replica.reset();
}

// The throughput `a` would take from its service if it started now on
// `seen`: what its source instance serves there (nothing if that replica is
// gone already, as after a restart).
double LossOnSeen(const Action& a, const cluster::ClusterState& seen) {
  if (a.kind != cluster::ActionKind::kDelete &&
      a.kind != cluster::ActionKind::kMigrate) {
    return 0;
  }
  const cluster::Slot* slot =
      seen.FindServing(a.at.gpu, a.at.instance, a.replica.service);
  return slot == nullptr ? 0 : slot->replica->throughput;
}

}  // namespace

Status Controller::Precondition(const Action& a,
                                const cluster::ClusterState& seen,
                                const std::map<std::string, double>& capacity,
                                const std::vector<const Action*>& running,
                                const TransitionGoal& goal) const {
  double loss = LossOnSeen(a, seen);
  if (loss <= 0) return Status::Ok();
  const std::string& service = a.replica.service;
  auto it = capacity.find(service);
  double ready = it == capacity.end() ? 0 : it->second;
  double left = ready - loss;
  for (const Action* r : running) {
    if (r->replica.service == service) left -= LossOnSeen(*r, seen);
  }
  double floor = goal.Floor(service);
  if (left >= floor - kCapacityTolerance) return Status::Ok();
  return Status::Unavailable(fmt::format(
      "the cluster is not as the plan expects: action {} ({} of {}) would "
      "leave {} at {:.6g} req/s ({:.6g} ready), below its floor {:.6g}",
      a.id, cluster::KindName(a.kind), a.replica.service, service, left, ready,
      floor));
}

Status Controller::SyncRoutes(int version, int action,
                              const cluster::ClusterState& routed,
                              const std::set<std::string>& services) {
  if (options_.router == nullptr) return Status::Ok();
  for (const std::string& service : services) {
    if (service.empty()) continue;
    cluster::ServiceRoute route = cluster::RouteOf(routed, service);
    StatusOr<bool> changed = options_.router->SetRoute(route);
    if (!changed.ok()) {
      return Status::Unavailable(
          fmt::format("routing {}: {}", service, changed.status().message()));
    }
    if (!*changed) continue;
    ++stats_.route_changes;
    MIGSERVE_RETURN_IF_ERROR(journal_->RecordRoute(
        version, {action, service, cluster::FormatRoute(route)}));
  }
  return Status::Ok();
}

Status Controller::AwaitRunning(int version) {
  while (!backend_->Running().empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(cluster::ActionResult r, backend_->WaitAny());
    MIGSERVE_RETURN_IF_ERROR(journal_->Mark(
        version, r.id,
        r.status.ok() ? ActionState::kDone : ActionState::kFailed));
  }
  return Status::Ok();
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

Status Controller::Execute(int version, const TransitionPlan& plan,
                           std::map<int, ActionState> states,
                           const TransitionGoal& goal) {
  MIGSERVE_RETURN_IF_ERROR(MayAct());
  for (const auto& [id, state] : states) {
    if (state == ActionState::kFailed) {
      return Status::Unavailable(fmt::format("action {} failed", id));
    }
  }
  // Actions started before a restart: still running, visibly done, or
  // never begun (then they start again).
  std::vector<int> running_ids = backend_->Running();
  std::set<int> running(running_ids.begin(), running_ids.end());
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed,
                            backend_->Observe());
  std::set<int> done, in_flight;
  for (const Action& a : plan.actions) {
    auto it = states.find(a.id);
    if (it == states.end()) continue;
    if (it->second == ActionState::kDone) {
      done.insert(a.id);
    } else if (running.count(a.id) > 0) {
      in_flight.insert(a.id);
    } else if (cluster::HasTakenEffect(a, observed)) {
      MIGSERVE_RETURN_IF_ERROR(
          journal_->Mark(version, a.id, ActionState::kDone));
      done.insert(a.id);
    }
  }
  // What is routed: the ready replicas, less those whose removal started.
  cluster::ClusterState routed = observed;
  std::set<std::string> services;
  for (const auto& [service, capacity] : observed.Capacity()) {
    services.insert(service);
  }
  for (const Action& a : plan.actions) {
    services.insert(a.replica.service);
    auto it = states.find(a.id);
    if (it != states.end() && done.count(a.id) == 0) StartRouted(a, &routed);
  }
  MIGSERVE_RETURN_IF_ERROR(SyncRoutes(version, -1, routed, services));
  // The last observed cluster and its ready capacity: the preconditions of
  // the actions about to start are checked against them.
  cluster::ClusterState seen = observed;
  std::map<std::string, double> seen_capacity = seen.Capacity();
  int finished = 0;
  ProgressTimer timer(options_.progress_every_s);
  while (done.size() < plan.actions.size()) {
    for (const Action& a : plan.actions) {
      if (done.count(a.id) > 0 || in_flight.count(a.id) > 0) continue;
      bool ready = std::all_of(a.after.begin(), a.after.end(),
                               [&](int id) { return done.count(id) > 0; });
      if (!ready) continue;
      if (Status allowed = MayAct(); !allowed.ok()) {
        // Stop starting; let what runs end (each backend bounds an action's
        // time), so that the journal says what is done.
        MIGSERVE_RETURN_IF_ERROR(AwaitRunning(version));
        return allowed;
      }
      std::vector<const Action*> running_actions;
      for (const Action& r : plan.actions) {
        if (in_flight.count(r.id) > 0) running_actions.push_back(&r);
      }
      MIGSERVE_RETURN_IF_ERROR(
          Precondition(a, seen, seen_capacity, running_actions, goal));
      MIGSERVE_RETURN_IF_ERROR(
          journal_->Mark(version, a.id, ActionState::kStarted));
      // Requests leave a replica before it goes.
      StartRouted(a, &routed);
      MIGSERVE_RETURN_IF_ERROR(
          SyncRoutes(version, a.id, routed, {a.replica.service}));
      Status started = backend_->Start(a);
      if (!started.ok()) {
        MIGSERVE_RETURN_IF_ERROR(
            journal_->Mark(version, a.id, ActionState::kFailed));
        return Status::Unavailable(started.message());
      }
      in_flight.insert(a.id);
    }
    if (in_flight.empty()) {
      return Status::Internal("plan cannot progress: an action waits forever");
    }
    MIGSERVE_ASSIGN_OR_RETURN(cluster::ActionResult result,
                              backend_->WaitAny());
    if (in_flight.erase(result.id) == 0) continue;
    if (result.status.ok()) {
      // Requests reach a replica once it is ready.
      const Action& a =
          *std::find_if(plan.actions.begin(), plan.actions.end(),
                        [&](const Action& x) { return x.id == result.id; });
      MIGSERVE_RETURN_IF_ERROR(cluster::FinishAction(a, &routed));
      MIGSERVE_RETURN_IF_ERROR(
          SyncRoutes(version, a.id, routed, {a.replica.service}));
    }
    MIGSERVE_RETURN_IF_ERROR(journal_->Mark(
        version, result.id,
        result.status.ok() ? ActionState::kDone : ActionState::kFailed));
    if (!result.status.ok())
      return Status::Unavailable(result.status.message());
    done.insert(result.id);
    ++stats_.actions_run;
    if (timer.Due()) {
      Progress(fmt::format("{} of {} actions done, {} running", done.size(),
                           plan.actions.size(), in_flight.size()));
    }
    MIGSERVE_ASSIGN_OR_RETURN(seen, backend_->Observe());
    for (const cluster::GpuState& g : observed.gpus) {
      if (seen.FindGpu(g.id) == nullptr) {
        return Status::Unavailable(
            fmt::format("GPU {} was lost", g.id.ToString()));
      }
    }
    seen_capacity = seen.Capacity();
    if (++finished == options_.stop_after) {
      return Status::Aborted(
          fmt::format("controller stopped after {} actions", finished));
    }
  }
  return Status::Ok();
}

}  // namespace migserve::controller
