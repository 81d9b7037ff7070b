#include "controller/reconciler_metrics.h"

#include <fmt/format.h>

#include <vector>

#include "util/enum_names.h"

namespace migserve::controller {
namespace {

constexpr EnumName<ReconcilerState> kStateNames[] = {
    {ReconcilerState::kStarting, "starting"},
    {ReconcilerState::kIdle, "idle"},
    {ReconcilerState::kTransition, "transition"},
    {ReconcilerState::kError, "error"}};

constexpr EnumName<ReconcileResult> kResultNames[] = {
    {ReconcileResult::kOk, "ok"},
    {ReconcileResult::kIdle, "idle"},
    {ReconcileResult::kSuperseded, "superseded"},
    {ReconcileResult::kError, "error"}};

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

std::string_view StateName(ReconcilerState state) {
  return NameOf(kStateNames, state);
}

std::string_view ResultName(ReconcileResult result) {
  return NameOf(kResultNames, result);
}

void ReconcilerMetrics::Transitioning() {
  std::lock_guard lock(mu_);
  state_ = ReconcilerState::kTransition;
}

void ReconcilerMetrics::Finished(ReconcileResult result, const Status& status) {
  std::lock_guard lock(mu_);
  ++passes_[result];
  state_ = result == ReconcileResult::kError ? ReconcilerState::kError
                                             : ReconcilerState::kIdle;
  last_error_ = status.ok() ? "" : status.message();
}

void ReconcilerMetrics::PlansMade(int plans) {
  std::lock_guard lock(mu_);
  plans_ += plans;
}

void ReconcilerMetrics::ActionStarted() {
  std::lock_guard lock(mu_);
  ++running_;
}

void ReconcilerMetrics::ActionEnded(cluster::ActionKind kind, bool ok) {
  std::lock_guard lock(mu_);
  ++actions_[{kind, ok}];
  --running_;
}

void ReconcilerMetrics::ActionRefused(cluster::ActionKind kind) {
  std::lock_guard lock(mu_);
  ++actions_[{kind, false}];
}

void ReconcilerMetrics::Observed(std::map<std::string, double> capacity,
                                 std::map<std::string, double> required) {
  std::lock_guard lock(mu_);
  capacity_ = std::move(capacity);
  required_ = std::move(required);
}

void ReconcilerMetrics::Degraded(std::string description) {
  std::lock_guard lock(mu_);
  degraded_ = std::move(description);
}

void ReconcilerMetrics::Log(const std::string& line) {
  std::lock_guard lock(mu_);
  log_.push_back(line);
  if (log_.size() > 50) log_.pop_front();
}

Status ReconcilerMetrics::Health() const {
  std::lock_guard lock(mu_);
  if (state_ == ReconcilerState::kError) {
    return Status::Unavailable("the last reconcile failed: " + last_error_);
  }
  if (!degraded_.empty()) return Status::Unavailable("degraded: " + degraded_);
  return Status::Ok();
}

std::string ReconcilerMetrics::Text() const {
  std::lock_guard lock(mu_);
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  header("migserve_reconciles_total", "counter",
         "Reconcile passes by result (ok: a transition ran, idle: the cluster "
         "held the target, superseded: a newer target stopped the "
         "transition, error).");
  for (const auto& [result, name] : kResultNames) {
    auto it = passes_.find(result);
    out += fmt::format("migserve_reconciles_total{{result=\"{}\"}} {}\n", name,
                       it == passes_.end() ? 0 : it->second);
  }
  header("migserve_plans_total", "counter", "Transition plans made.");
  out += fmt::format("migserve_plans_total {}\n", plans_);
  header("migserve_actions_total", "counter",
         "Actions that ended, by kind and result.");
  for (cluster::ActionKind kind : cluster::kActionKinds) {
    for (bool ok : {true, false}) {
      auto it = actions_.find({kind, ok});
      out += fmt::format(
          "migserve_actions_total{{kind=\"{}\",result=\"{}\"}} {}\n",
          cluster::KindName(kind), ok ? "ok" : "failed",
          it == actions_.end() ? 0 : it->second);
    }
  }
  header("migserve_actions_running", "gauge", "Actions started, not ended.");
  out += fmt::format("migserve_actions_running {}\n", running_);
  header("migserve_transition_running", "gauge", "1 while a transition runs.");
  out += fmt::format("migserve_transition_running {}\n",
                     state_ == ReconcilerState::kTransition ? 1 : 0);
  header("migserve_degraded", "gauge",
         "1 while the cluster cannot hold the target and the controller "
         "serves the part of it that fits.");
  out += fmt::format("migserve_degraded {}\n", degraded_.empty() ? 0 : 1);
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

nlohmann::json ReconcilerMetrics::Progress() const {
  std::lock_guard lock(mu_);
  nlohmann::json actions = nlohmann::json::object();
  for (const auto& [key, n] : actions_) {
    actions[std::string(cluster::KindName(key.first))]
           [key.second ? "ok" : "failed"] = n;
  }
  nlohmann::json services = nlohmann::json::object();
  for (const auto& [s, c] : capacity_) {
    auto required = required_.find(s);
    services[s] = {
        {"capacity", c},
        {"required", required == required_.end() ? 0.0 : required->second}};
  }
  return {{"state", std::string(StateName(state_))},
          {"last_error", last_error_},
          {"degraded", degraded_.empty() ? nlohmann::json(nullptr)
                                         : nlohmann::json(degraded_)},
          {"plans", plans_},
          {"running", running_},
          {"actions", actions},
          {"services", services},
          {"log",
           nlohmann::json(std::vector<std::string>(log_.begin(), log_.end()))}};
}

}  // namespace migserve::controller
