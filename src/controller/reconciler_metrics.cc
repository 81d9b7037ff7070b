#include "controller/reconciler_metrics.h"

#include <fmt/format.h>

#include <vector>

#include "util/enum_names.h"
#include "util/prometheus_text.h"

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

}  // namespace

std::string_view StateName(ReconcilerState state) {
  return NameOf(kStateNames, state);
}

void ReconcilerMetrics::Transitioning() {
  MutexLock lock(&mu_);
  state_ = ReconcilerState::kTransition;
}

void ReconcilerMetrics::Finished(ReconcileResult result, const Status& status) {
  MutexLock lock(&mu_);
  ++passes_[result];
  state_ = result == ReconcileResult::kError ? ReconcilerState::kError
                                             : ReconcilerState::kIdle;
  last_error_ = status.ok() ? "" : status.message();
}

void ReconcilerMetrics::PlansMade(int plans) {
  MutexLock lock(&mu_);
  plans_ += plans;
}

void ReconcilerMetrics::ActionStarted() {
  MutexLock lock(&mu_);
  ++running_;
}

void ReconcilerMetrics::ActionEnded(cluster::ActionKind kind, bool ok) {
  MutexLock lock(&mu_);
  ++actions_[{kind, ok}];
  --running_;
}

void ReconcilerMetrics::ActionRefused(cluster::ActionKind kind) {
  MutexLock lock(&mu_);
  ++actions_[{kind, false}];
}

void ReconcilerMetrics::Observed(std::map<std::string, double> capacity,
                                 std::map<std::string, double> required,
                                 int gpus_held) {
  MutexLock lock(&mu_);
  capacity_ = std::move(capacity);
  required_ = std::move(required);
  gpus_held_ = gpus_held;
}

void ReconcilerMetrics::Degraded(std::string description) {
  MutexLock lock(&mu_);
  degraded_ = std::move(description);
}

void ReconcilerMetrics::Log(const std::string& line) {
  MutexLock lock(&mu_);
  log_.push_back(line);
  if (log_.size() > 50) log_.pop_front();
}

Status ReconcilerMetrics::Health() const {
  MutexLock lock(&mu_);
  if (state_ == ReconcilerState::kError) {
    return Status::Unavailable("the last reconcile failed: " + last_error_);
  }
  if (!degraded_.empty()) return Status::Unavailable("degraded: " + degraded_);
  return Status::Ok();
}

std::string ReconcilerMetrics::Text() const {
  MutexLock lock(&mu_);
  PrometheusText out;
  out.Family("migserve_reconciles_total", "counter",
             "Reconcile passes by result (ok: a transition ran, idle: the "
             "cluster held the target, superseded: a newer target stopped the "
             "transition, error).");
  for (const auto& [result, name] : kResultNames) {
    auto it = passes_.find(result);
    out.Sample("migserve_reconciles_total",
               it == passes_.end() ? 0 : it->second, {{"result", name}});
  }
  out.Family("migserve_plans_total", "counter", "Transition plans made.");
  out.Sample("migserve_plans_total", plans_);
  out.Family("migserve_actions_total", "counter",
             "Actions that ended, by kind and result.");
  for (cluster::ActionKind kind : cluster::kActionKinds) {
    for (bool ok : {true, false}) {
      auto it = actions_.find({kind, ok});
      out.Sample("migserve_actions_total",
                 it == actions_.end() ? 0 : it->second,
                 {{"kind", cluster::KindName(kind)},
                  {"result", ok ? "ok" : "failed"}});
    }
  }
  out.Family("migserve_actions_running", "gauge",
             "Actions started, not ended.");
  out.Sample("migserve_actions_running", running_);
  out.Family("migserve_transition_running", "gauge",
             "1 while a transition runs.");
  out.Sample("migserve_transition_running",
             state_ == ReconcilerState::kTransition ? 1 : 0);
  out.Family("migserve_degraded", "gauge",
             "1 while the cluster cannot hold the target and the controller "
             "serves the part of it that fits.");
  out.Sample("migserve_degraded", degraded_.empty() ? 0 : 1);
  out.Family("migserve_service_capacity", "gauge",
             "Requests/s the service's ready replicas serve (last observed).");
  for (const auto& [s, c] : capacity_) {
    out.Sample("migserve_service_capacity", c, {{"service", s}});
  }
  out.Family("migserve_service_required", "gauge",
             "Requests/s the target requires.");
  for (const auto& [s, r] : required_) {
    out.Sample("migserve_service_required", r, {{"service", s}});
  }
  return out.text();
}

nlohmann::json ReconcilerMetrics::Progress() const {
  MutexLock lock(&mu_);
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
          {"gpus_held", gpus_held_},
          {"log",
           nlohmann::json(std::vector<std::string>(log_.begin(), log_.end()))}};
}

}  // namespace migserve::controller
