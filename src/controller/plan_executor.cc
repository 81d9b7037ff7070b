#include "controller/plan_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cluster/apply.h"

namespace migserve::controller {

using cluster::Action;

PlanExecutor::PlanExecutor(cluster::ClusterBackend* backend, Journal* journal,
                           ExecutorOptions options)
    : backend_(backend), journal_(journal), options_(std::move(options)) {}

// Where a run stands: the actions done and in flight, and the cluster as
// last observed with its ready capacity per service.
struct PlanExecutor::RunState {
  std::set<int> done;
  std::set<int> in_flight;
  cluster::ClusterState observed;  // at the start
  cluster::ClusterState seen;      // last
  std::map<std::string, double> capacity;
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
  at->seen = at->observed;
  at->capacity = at->seen.Capacity();
  return started;
}

Status PlanExecutor::StartReady(int version,
                                const cluster::TransitionPlan& plan,
                                ExecutionHooks* hooks, RunState* at) {
  for (const Action& a : plan.actions) {
    if (at->done.count(a.id) > 0 || at->in_flight.count(a.id) > 0) continue;
    bool ready = std::all_of(a.after.begin(), a.after.end(),
                             [&](int id) { return at->done.count(id) > 0; });
    if (!ready) continue;
    if (Status allowed = hooks->MayAct(); !allowed.ok()) {
      // Stop starting; let what runs end (each backend bounds an action's
      // time), so that the journal says what is done.
      MIGSERVE_RETURN_IF_ERROR(AwaitRunning(backend_, journal_, version));
      return allowed;
    }
    std::vector<const Action*> running;
    for (const Action& r : plan.actions) {
      if (at->in_flight.count(r.id) > 0) running.push_back(&r);
    }
    MIGSERVE_RETURN_IF_ERROR(hooks->Guard(a, at->seen, at->capacity, running));
    MIGSERVE_RETURN_IF_ERROR(
        journal_->Mark(version, a.id, ActionState::kStarted));
    MIGSERVE_RETURN_IF_ERROR(hooks->Starting(a));
    Status began = backend_->Start(a);
    if (!began.ok()) {
      MIGSERVE_RETURN_IF_ERROR(
          journal_->Mark(version, a.id, ActionState::kFailed));
      return Status::Unavailable(began.message());
    }
    at->in_flight.insert(a.id);
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
  RunState at;
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
    if (result.status.ok()) {
      const Action& a =
          *std::find_if(plan.actions.begin(), plan.actions.end(),
                        [&](const Action& x) { return x.id == result.id; });
      MIGSERVE_RETURN_IF_ERROR(hooks->Finished(a));
    }
    MIGSERVE_RETURN_IF_ERROR(journal_->Mark(
        version, result.id,
        result.status.ok() ? ActionState::kDone : ActionState::kFailed));
    if (!result.status.ok())
      return Status::Unavailable(result.status.message());
    at.done.insert(result.id);
    ++actions_run_;
    if (timer.Due() && options_.progress) {
      options_.progress(fmt::format("{} of {} actions done, {} running",
                                    at.done.size(), plan.actions.size(),
                                    at.in_flight.size()));
    }
    MIGSERVE_ASSIGN_OR_RETURN(at.seen, backend_->Observe());
    for (const cluster::GpuState& g : at.observed.gpus) {
      if (at.seen.FindGpu(g.id) == nullptr) {
        return Status::Unavailable(
            fmt::format("GPU {} was lost", g.id.ToString()));
      }
    }
    at.capacity = at.seen.Capacity();
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
