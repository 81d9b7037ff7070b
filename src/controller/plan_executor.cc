#include "controller/plan_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "cluster/apply.h"

namespace migserve::controller {

using cluster::Action;

PlanExecutor::PlanExecutor(cluster::ClusterBackend* backend, Journal* journal,
                           ExecutorOptions options)
    : backend_(backend), journal_(journal), options_(std::move(options)) {}

// Where a run stands: the actions done and in flight, those ready to start
// (every `after` done), and the cluster as last observed with its ready
// capacity per service. Actions are numbered by their place in the plan;
// each finish touches only its dependents, so a plan of n actions is
// scheduled in O(n log n) in all.
struct PlanExecutor::RunState {
  explicit RunState(const cluster::TransitionPlan& plan)
      : waiting(plan.actions.size(), 0), dependents(plan.actions.size()) {
    for (size_t i = 0; i < plan.actions.size(); ++i) {
      index[plan.actions[i].id] = static_cast<int>(i);
    }
  }

  // Counts each action's `after` that are not done, and the actions ready.
  void Schedule(const cluster::TransitionPlan& plan) {
    for (size_t i = 0; i < plan.actions.size(); ++i) {
      const Action& a = plan.actions[i];
      for (int id : a.after) {
        if (done.count(id) > 0) continue;
        ++waiting[i];
        auto it = index.find(id);
        if (it != index.end()) dependents[it->second].push_back(i);
      }
      if (waiting[i] == 0 && done.count(a.id) == 0 &&
          in_flight.count(a.id) == 0) {
        ready.insert(static_cast<int>(i));
      }
    }
  }

  void Start(const Action& a) {
    in_flight.insert(a.id);
    running[a.replica.service].insert(index.at(a.id));
  }

  void Done(const cluster::TransitionPlan& plan, int id) {
    done.insert(id);
    int i = index.at(id);
    running[plan.actions[i].replica.service].erase(i);
    for (int j : dependents[i]) {
      if (--waiting[j] == 0) ready.insert(j);
    }
  }

  std::map<int, int> index;                  // action id -> place in the plan
  std::vector<int> waiting;                  // per place: `after` not yet done
  std::vector<std::vector<int>> dependents;  // per place: who waits on it
  std::set<int> ready;                       // places, in plan order
  // Places of the actions in flight, per service.
  std::map<std::string, std::set<int>> running;
  // Reads the cluster as it is now into `seen` and `capacity`: the
  // backend's live view where it keeps one, else a copy it observes.
  // Returns Unavailable naming a GPU observed at the start that is gone.
  Status Look(cluster::ClusterBackend* backend) {
    std::optional<cluster::LiveView> live = backend->Live();
    if (live) {
      seen = live->state;
      capacity = live->capacity;
      // The GPUs are checked only when the backend says they changed.
      if (live->gpus_version == gpus_version) return Status::Ok();
      gpus_version = live->gpus_version;
    } else {
      MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState now, backend->Observe());
      Keep(std::move(now));
    }
    for (const cluster::GpuState& g : observed.gpus) {
      if (seen->FindGpu(g.id) == nullptr) {
        return Status::Unavailable(
            fmt::format("GPU {} was lost", g.id.ToString()));
      }
    }
    return Status::Ok();
  }

  // Looks at `state`, a copy of the cluster.
  void Keep(cluster::ClusterState state) {
    kept = std::move(state);
    kept_capacity = kept.Capacity();
    seen = &kept;
    capacity = &kept_capacity;
  }

  std::set<int> done;
  std::set<int> in_flight;
  cluster::ClusterState observed;  // at the start
  // The cluster as last looked at, and its ready capacity per service: the
  // backend's live view, or `kept` and `kept_capacity`.
  const cluster::ClusterState* seen = nullptr;
  const std::map<std::string, double>* capacity = nullptr;
  cluster::ClusterState kept;
  std::map<std::string, double> kept_capacity;
  int gpus_version = -1;  // of the live view whose GPUs were checked
};

StatusOr<std::vector<const Action*>> PlanExecutor::Resume(
    int version, const cluster::TransitionPlan& plan,
    const std::map<int, ActionState>& states, RunState* at) {
  // Actions started before a restart: still running, visibly done, or
  // never begun (then they start again).
  std::vector<int> running_ids = backend_->Running();
  std::set<int> running(running_ids.begin(), running_ids.end());
  MIGSERVE_ASSIGN_OR_RETURN(at->observed, backend_->Observe());
  std::vector<const Action*> started;
  for (const Action& a : plan.actions) {
    auto it = states.find(a.id);
    if (it == states.end()) continue;
    if (it->second == ActionState::kDone) {
      at->done.insert(a.id);
    } else if (running.count(a.id) > 0) {
      at->in_flight.insert(a.id);
    } else if (cluster::HasTakenEffect(a, at->observed)) {
      MIGSERVE_RETURN_IF_ERROR(
          journal_->Mark(version, a.id, ActionState::kDone));
      at->done.insert(a.id);
    }
    if (at->done.count(a.id) == 0) started.push_back(&a);
  }
  if (backend_->Live()) {
    MIGSERVE_RETURN_IF_ERROR(at->Look(backend_));
  } else {
    at->Keep(at->observed);
  }
  for (int id : at->in_flight) at->Start(plan.actions[at->index.at(id)]);
  at->Schedule(plan);
  return started;
}

Status PlanExecutor::StartReady(int version,
                                const cluster::TransitionPlan& plan,
                                ExecutionHooks* hooks, RunState* at) {
  while (!at->ready.empty()) {
    const Action& a = plan.actions[*at->ready.begin()];
    if (Status allowed = hooks->MayAct(); !allowed.ok()) {
      // Stop starting; let what runs end (each backend bounds an action's
      // time), so that the journal says what is done.
      MIGSERVE_RETURN_IF_ERROR(AwaitRunning(backend_, journal_, version));
      return allowed;
    }
    std::vector<const Action*> running;
    for (int i : at->running[a.replica.service]) {
      running.push_back(&plan.actions[i]);
    }
    MIGSERVE_RETURN_IF_ERROR(
        hooks->Guard(a, *at->seen, *at->capacity, running));
    MIGSERVE_RETURN_IF_ERROR(
        journal_->Mark(version, a.id, ActionState::kStarted));
    MIGSERVE_RETURN_IF_ERROR(hooks->Starting(a, *at->seen));
    Status began = backend_->Start(a);
    if (!began.ok()) {
      MIGSERVE_RETURN_IF_ERROR(
          journal_->Mark(version, a.id, ActionState::kFailed));
      return Status::Unavailable(began.message());
    }
    at->ready.erase(at->ready.begin());
    at->Start(a);
  }
  return Status::Ok();
}

Status PlanExecutor::Run(int version, const cluster::TransitionPlan& plan,
                         const std::map<int, ActionState>& states,
                         ExecutionHooks* hooks) {
  MIGSERVE_RETURN_IF_ERROR(hooks->MayAct());
  for (const auto& [id, state] : states) {
    if (state == ActionState::kFailed) {
      return Status::Unavailable(fmt::format("action {} failed", id));
    }
  }
  RunState at(plan);
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<const Action*> started,
                            Resume(version, plan, states, &at));
  MIGSERVE_RETURN_IF_ERROR(hooks->Begin(at.observed, started));
  int finished = 0;
  ProgressTimer timer(options_.progress_every_s);
  while (at.done.size() < plan.actions.size()) {
    MIGSERVE_RETURN_IF_ERROR(StartReady(version, plan, hooks, &at));
    if (at.in_flight.empty()) {
      return Status::Internal("plan cannot progress: an action waits forever");
    }
    MIGSERVE_ASSIGN_OR_RETURN(cluster::ActionResult result,
                              backend_->WaitAny());
    if (at.in_flight.erase(result.id) == 0) continue;
    // The cluster as it is now, for the hook (a replica gone since it was
    // made is not routed) and the next starts; a GPU lost is said once
    // the action is journaled.
    Status looked = at.Look(backend_);
    if (result.status.ok()) {
      MIGSERVE_RETURN_IF_ERROR(
          hooks->Finished(plan.actions[at.index.at(result.id)], *at.seen));
    }
    MIGSERVE_RETURN_IF_ERROR(journal_->Mark(
        version, result.id,
        result.status.ok() ? ActionState::kDone : ActionState::kFailed));
    if (!result.status.ok())
      return Status::Unavailable(result.status.message());
    at.Done(plan, result.id);
    ++actions_run_;
    if (timer.Due() && options_.progress) {
      options_.progress(fmt::format("{} of {} actions done, {} running",
                                    at.done.size(), plan.actions.size(),
                                    at.in_flight.size()));
    }
    MIGSERVE_RETURN_IF_ERROR(looked);
    if (++finished == options_.stop_after) {
      return Status::Aborted(
          fmt::format("controller stopped after {} actions", finished));
    }
  }
  return Status::Ok();
}

Status AwaitRunning(cluster::ClusterBackend* backend, Journal* journal,
                    int version) {
  while (!backend->Running().empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(cluster::ActionResult r, backend->WaitAny());
    MIGSERVE_RETURN_IF_ERROR(journal->Mark(
        version, r.id,
        r.status.ok() ? ActionState::kDone : ActionState::kFailed));
  }
  return Status::Ok();
}

}  // namespace migserve::controller
