#include "controller/reconciler.h"

#include <fmt/format.h>

namespace migserve::controller {

// Counts the actions that pass through to the real backend.
class Reconciler::MeteredBackend : public cluster::ClusterBackend {
 public:
  MeteredBackend(cluster::ClusterBackend* inner, Reconciler* owner)
      : inner_(inner), owner_(owner) {}

  StatusOr<cluster::ClusterState> Observe() override {
    return inner_->Observe();
  }
  Status Start(const cluster::Action& action) override {
    Status s = inner_->Start(action);
    std::lock_guard lock(owner_->mu_);
    if (s.ok()) {
      kinds_[action.id] = std::string(cluster::KindName(action.kind));
      ++owner_->running_;
    } else {
      ++owner_->actions_[{std::string(cluster::KindName(action.kind)), false}];
    }
    return s;
  }
  std::vector<int> Running() const override { return inner_->Running(); }
  StatusOr<cluster::ActionResult> WaitAny() override {
    auto result = inner_->WaitAny();
    if (result.ok()) {
      std::lock_guard lock(owner_->mu_);
      auto kind = kinds_.find(result->id);
      if (kind != kinds_.end()) {
        ++owner_->actions_[{kind->second, result->status.ok()}];
        --owner_->running_;
        kinds_.erase(kind);
      }
    }
    return result;
  }

 private:
  cluster::ClusterBackend* inner_;
  Reconciler* owner_;
  std::map<int, std::string> kinds_;
};

Reconciler::Reconciler(cluster::ClusterBackend* backend, Journal* journal,
                       ControllerOptions options)
    : backend_(std::make_unique<MeteredBackend>(backend, this)),
      journal_(journal),
      options_(std::move(options)) {
  auto outer = options_.progress;
  options_.progress = [this, outer](const std::string& line) {
    Log(line);
    if (outer) outer(line);
  };
}

Reconciler::~Reconciler() = default;

void Reconciler::Log(const std::string& line) {
  std::lock_guard lock(mu_);
  log_.push_back(line);
  if (log_.size() > 50) log_.pop_front();
}

void Reconciler::Observed(const cluster::ClusterState& state,
                          const deployment::Deployment& target) {
  std::lock_guard lock(mu_);
  capacity_ = state.Capacity();
  required_.clear();
  for (const workload::Service& s : target.services) {
    required_[s.name] = s.throughput;
    capacity_.try_emplace(s.name, 0);
  }
}

Status Reconciler::Reconcile(const deployment::Deployment& target) {
  auto finish = [&](const std::string& result, const Status& status) {
    std::lock_guard lock(mu_);
    ++reconciles_[result];
    state_ = result == "error" ? "error" : "idle";
    last_error_ = status.ok() ? "" : status.message();
    return status;
  };
  auto observed = backend_->Observe();
  if (!observed.ok()) return finish("error", observed.status());
  Observed(*observed, target);
  TransitionGoal goal = GoalFromObserved(*observed, target);
  if (required_now_) goal.required_before = *required_now_;
  auto plan = PlanTransition(*observed, target, goal, options_.planner);
  auto pending = journal_->Current();
  bool resuming = pending.ok() && pending->has_value();
  if (plan.ok() && plan->actions.empty() && !resuming) {
    required_now_ = goal.required_after;
    return finish("idle", Status::Ok());
  }
  {
    std::lock_guard lock(mu_);
    state_ = "transition";
  }
  Controller controller(backend_.get(), journal_, options_);
  Status moved = controller.Transition(target, goal);
  {
    std::lock_guard lock(mu_);
    plans_ += controller.stats().plans;
  }
  if (auto after = backend_->Observe(); after.ok()) Observed(*after, target);
  if (controller.stats().superseded) {
    const TransitionGoal& stopped = controller.stats().goal;
    std::map<std::string, double> floors;
    for (const auto* side :
         {&stopped.required_before, &stopped.required_after}) {
      for (const auto& [service, rate] : *side) {
        floors[service] = stopped.Floor(service);
      }
    }
    required_now_ = std::move(floors);
    options_.progress("controller: " + moved.message());
    return finish("superseded", Status::Ok());
  }
  if (!moved.ok()) return finish("error", moved);
  required_now_ = goal.required_after;
  return finish("ok", Status::Ok());
}

Status Reconciler::Health() const {
  std::lock_guard lock(mu_);
  if (state_ != "error") return Status::Ok();
  return Status::Unavailable("the last reconcile failed: " + last_error_);
}

namespace {

// A label value in the Prometheus text format: backslash, double quote and
// line feed escaped, so that no name can end the value or the line.
std::string LabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string Reconciler::Metrics() const {
  std::lock_guard lock(mu_);
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  header("migserve_reconciles_total", "counter",
         "Reconcile passes by result (ok: a transition ran, idle: the cluster "
         "held the target, superseded: a newer target stopped the "
         "transition, error).");
  for (const char* r : {"ok", "idle", "superseded", "error"}) {
    auto it = reconciles_.find(r);
    out += fmt::format("migserve_reconciles_total{{result=\"{}\"}} {}\n", r,
                       it == reconciles_.end() ? 0 : it->second);
  }
  header("migserve_plans_total", "counter", "Transition plans made.");
  out += fmt::format("migserve_plans_total {}\n", plans_);
  header("migserve_actions_total", "counter",
         "Actions that ended, by kind and result.");
  for (const char* kind : {"create", "delete", "migrate", "repartition"}) {
    for (bool ok : {true, false}) {
      auto it = actions_.find({kind, ok});
      out += fmt::format(
          "migserve_actions_total{{kind=\"{}\",result=\"{}\"}} {}\n", kind,
          ok ? "ok" : "failed", it == actions_.end() ? 0 : it->second);
    }
  }
  header("migserve_actions_running", "gauge", "Actions started, not ended.");
  out += fmt::format("migserve_actions_running {}\n", running_);
  header("migserve_transition_running", "gauge", "1 while a transition runs.");
  out += fmt::format("migserve_transition_running {}\n",
                     state_ == "transition" ? 1 : 0);
  header("migserve_service_capacity", "gauge",
         "Requests/s the service's ready replicas serve (last observed).");
  for (const auto& [s, c] : capacity_) {
    out += fmt::format("migserve_service_capacity{{service=\"{}\"}} {}\n",
                       LabelValue(s), c);
  }
  header("migserve_service_required", "gauge",
         "Requests/s the target requires.");
  for (const auto& [s, r] : required_) {
    out += fmt::format("migserve_service_required{{service=\"{}\"}} {}\n",
                       LabelValue(s), r);
  }
  return out;
}

nlohmann::json Reconciler::Progress() const {
  std::lock_guard lock(mu_);
  nlohmann::json actions = nlohmann::json::object();
  for (const auto& [key, n] : actions_) {
    actions[key.first][key.second ? "ok" : "failed"] = n;
  }
  nlohmann::json services = nlohmann::json::object();
  for (const auto& [s, c] : capacity_) {
    services[s] = {
        {"capacity", c},
        {"required", required_.count(s) > 0 ? required_.at(s) : 0.0}};
  }
  return {{"state", state_},
          {"last_error", last_error_},
          {"plans", plans_},
          {"running", running_},
          {"actions", actions},
          {"services", services},
          {"log",
           nlohmann::json(std::vector<std::string>(log_.begin(), log_.end()))}};
}

}  // namespace migserve::controller
