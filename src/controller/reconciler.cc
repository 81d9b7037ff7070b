#include "controller/reconciler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "cluster/backend_wrapper.h"
#include "controller/route_keeper.h"
#include "util/mutex.h"

namespace migserve::controller {

// Counts the actions that pass through to the real backend.
class Reconciler::MeteredBackend : public cluster::BackendWrapper {
 public:
  MeteredBackend(cluster::ClusterBackend* target, ReconcilerMetrics* metrics)
      : BackendWrapper(target), metrics_(metrics) {}

  Status Start(const cluster::Action& action) override {
    Status s = BackendWrapper::Start(action);
    if (s.ok()) {
      MutexLock lock(&mu_);
      kinds_[action.id] = action.kind;
      metrics_->ActionStarted();
    } else {
      metrics_->ActionRefused(action.kind);
    }
    return s;
  }
  StatusOr<cluster::ActionResult> WaitAny() override {
    auto result = BackendWrapper::WaitAny();
    if (result.ok()) {
      MutexLock lock(&mu_);
      auto kind = kinds_.find(result->id);
      if (kind != kinds_.end()) {
        metrics_->ActionEnded(kind->second, result->status.ok());
        kinds_.erase(kind);
      }
    }
    return result;
  }

 private:
  ReconcilerMetrics* metrics_;
  Mutex mu_;
  // Started through here.
  std::map<int, cluster::ActionKind> kinds_ GUARDED_BY(mu_);
};

Reconciler::Reconciler(cluster::ClusterBackend* backend, Journal* journal,
                       ControllerOptions options)
    : backend_(std::make_unique<MeteredBackend>(backend, &metrics_)),
      journal_(journal),
      options_(std::move(options)) {
  auto outer = options_.progress;
  options_.progress = [this, outer](const std::string& line) {
    metrics_.Log(line);
    if (outer) outer(line);
  };
  // What a previous controller said, so that its Degraded gets its
  // Recovered.
  if (StatusOr<std::string> said = journal_->Degraded(); said.ok()) {
    degraded_ = *said;
    metrics_.Degraded(degraded_);
  } else {
    options_.progress("controller: " + said.status().message());
  }
}

Reconciler::~Reconciler() = default;

void Reconciler::Observed(const cluster::ClusterState& state,
                          const deployment::Deployment& target) {
  std::map<std::string, double> capacity = state.Capacity(), required;
  for (const workload::Service& s : target.services) {
    required[s.name] = s.throughput.value();
    capacity.try_emplace(s.name, 0);
  }
  int held = static_cast<int>(
      std::count_if(state.gpus.begin(), state.gpus.end(),
                    [](const cluster::GpuState& g) { return g.HasReplica(); }));
  metrics_.Observed(std::move(capacity), std::move(required), held);
}

Status Reconciler::Finish(ReconcileResult result, const Status& status) {
  metrics_.Finished(result, status);
  return status;
}

std::map<std::string, double> Reconciler::StoppedFloors(
    const TransitionGoal& stopped) {
  std::map<std::string, double> floors;
  for (const auto* side : {&stopped.required_before, &stopped.required_after}) {
    for (const auto& [service, rate] : *side) {
      floors[service] = stopped.Floor(service);
    }
  }
  return floors;
}

std::optional<DegradedTarget> Reconciler::Fit(
    const cluster::ClusterState& observed,
    const deployment::Deployment& target) {
  std::optional<DegradedTarget> degraded = FitTarget(
      observed, target,
      required_now_ ? *required_now_ : std::map<std::string, double>{});
  std::string now = degraded ? degraded->description : "";
  if (now != degraded_) {
    if (Status kept = journal_->PutDegraded(now); !kept.ok()) {
      options_.progress("controller: " + kept.message());
    }
    std::string message =
        degraded ? now + "; moving to what fits"
                 : "the cluster holds the target again; moving back to it";
    options_.progress("controller: " + message);
    if (options_.event) {
      options_.event(degraded ? EventType::kWarning : EventType::kNormal,
                     degraded ? "Degraded" : "Recovered", message);
    }
    degraded_ = now;
    metrics_.Degraded(now);
  }
  return degraded;
}

Status Reconciler::Reconcile(const deployment::Deployment& target) {
  // A loss during the transition can leave a target that no longer fits:
  // the second pass moves to what does.
  Status status = ReconcileOnce(target);
  if (status.ok() || !degraded_.empty()) return status;
  auto observed = backend_->Observe();
  if (!observed.ok() || !FitTarget(*observed, target)) return status;
  return ReconcileOnce(target);
}

Status Reconciler::ReconcileOnce(const deployment::Deployment& target) {
  auto observed = backend_->Observe();
  if (!observed.ok()) return Finish(ReconcileResult::kError, observed.status());
  Observed(*observed, target);
  std::optional<DegradedTarget> degraded = Fit(*observed, target);
  const deployment::Deployment& aim = degraded ? degraded->deployment : target;
  TransitionGoal goal = required_now_
                            ? GoalKeeping(*observed, aim, *required_now_)
                            : GoalFromObserved(*observed, aim);
  auto plan = PlanTransition(*observed, aim, goal, options_.planner);
  auto pending = journal_->Current();
  bool resuming = pending.ok() && pending->has_value();
  if (plan.ok() && plan->actions.empty() && !resuming) {
    // Nothing to do, yet short: the target's replicas serve less than it
    // requires (a hand-edited file), which no transition mends.
    std::vector<std::string> short_of = EndStateProblems(*observed, goal);
    if (!short_of.empty()) {
      return Finish(
          ReconcileResult::kError,
          Status::FailedPrecondition(
              "the cluster holds the target, but " + short_of.front() +
              ": its replicas serve less than it requires"));
    }
    required_now_ = goal.required_after;
    // At the target, the routes are kept as the pods are: any that differs
    // from the cluster's (a stale leader's write that landed late, a hand
    // edit) is rewritten.
    std::set<std::string> services;
    for (const auto& [service, capacity] : observed->Capacity()) {
      services.insert(service);
    }
    for (const workload::Service& s : aim.services) services.insert(s.name);
    StatusOr<std::vector<std::string>> repaired =
        RepairRoutes(options_.router, *observed, services);
    if (!repaired.ok()) {
      return Finish(ReconcileResult::kError, repaired.status());
    }
    if (!repaired->empty()) {
      options_.progress(fmt::format(
          "controller: repaired the routes of {}: they differed from the "
          "cluster's ready replicas",
          fmt::join(*repaired, ", ")));
    }
    return Finish(ReconcileResult::kIdle, Status::Ok());
  }
  metrics_.Transitioning();
  Controller controller(backend_.get(), journal_, options_);
  Status moved = controller.Transition(aim, goal);
  metrics_.PlansMade(controller.stats().plans);
  if (auto after = backend_->Observe(); after.ok()) Observed(*after, target);
  if (controller.stats().superseded) {
    required_now_ = StoppedFloors(controller.stats().goal);
    options_.progress("controller: " + moved.message());
    return Finish(ReconcileResult::kSuperseded, Status::Ok());
  }
  if (!moved.ok()) return Finish(ReconcileResult::kError, moved);
  required_now_ = goal.required_after;
  return Finish(ReconcileResult::kOk, Status::Ok());
}

Status Reconciler::Health() const { return metrics_.Health(); }

std::string Reconciler::Metrics() const { return metrics_.Text(); }

nlohmann::json Reconciler::Progress() const { return metrics_.Progress(); }

}  // namespace migserve::controller
