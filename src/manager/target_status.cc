#include "manager/target_status.h"

#include <fmt/format.h>

#include <chrono>
#include <utility>

#include "kube/micro_time.h"

namespace migserve::manager {

using Json = nlohmann::json;
using kube::Condition;
using kube::ConditionJson;

Json TargetStatusOf(const TargetProgress& at, const Json& previous,
                    const std::string& now) {
  const Json& p = at.progress;
  std::string stage = p.value("state", "starting");
  std::string degraded =
      p.contains("degraded") && p["degraded"].is_string() ? p["degraded"] : "";
  std::string error = p.value("last_error", "");
  int done = 0, failed = 0;
  const Json actions = p.value("actions", Json::object());
  for (const auto& [kind, counts] : actions.items()) {
    done += counts.value("ok", 0);
    failed += counts.value("failed", 0);
  }
  int services = 0, at_rate = 0;
  const Json rates = p.value("services", Json::object());
  for (const auto& [name, s] : rates.items()) {
    ++services;
    // Within a millionth: the capacities are sums of credits.
    if (s.value("capacity", 0.0) >= s.value("required", 0.0) * (1 - 1e-6)) {
      ++at_rate;
    }
  }
  int gpus = p.value("gpus_held", 0);
  bool moving = stage == "transition" || stage == "starting" || !at.reached;
  bool failing = stage == "error";

  Condition ready{"Ready", false, "", ""};
  if (failing) {
    ready.reason = "ReconcileFailed";
    ready.message = error;
  } else if (moving) {
    ready.reason = "Transitioning";
    ready.message = fmt::format("moving to generation {}", at.generation);
  } else if (!degraded.empty()) {
    ready.reason = "Degraded";
    ready.message = degraded;
  } else {
    ready = {"Ready", true, "AtTarget",
             fmt::format("the cluster holds the target: {} of {} services at "
                         "their rates on {} GPUs",
                         at_rate, services, gpus)};
  }
  Condition progressing{"Progressing", moving && !failing, "", ""};
  if (progressing.status) {
    progressing.reason = "Transitioning";
    progressing.message = fmt::format(
        "{} actions done, {} running, every service kept at its floor", done,
        p.value("running", 0));
  } else {
    progressing.reason = failing ? "ReconcileFailed" : "AtTarget";
    progressing.message = failing ? error : "no transition under way";
  }
  Condition degraded_condition{"Degraded", failing || !degraded.empty(), "",
                               ""};
  if (failing) {
    degraded_condition.reason = "ReconcileFailed";
    degraded_condition.message = error;
  } else if (!degraded.empty()) {
    degraded_condition.reason = "ClusterCannotHoldTarget";
    degraded_condition.message = degraded;
  } else {
    degraded_condition.reason = "AsPlanned";
    degraded_condition.message = "the cluster can hold the target";
  }

  Json conditions = Json::array();
  for (const Condition* c : {&ready, &progressing, &degraded_condition}) {
    conditions.push_back(ConditionJson(*c, at.generation, previous, now));
  }
  Json status = {{"observedGeneration", at.generation},
                 {"stage", stage},
                 {"actionsDone", done},
                 {"actionsFailed", failed},
                 {"gpusHeld", gpus},
                 {"services", services},
                 {"servicesAtTarget", at_rate},
                 {"conditions", conditions}};
  if (!degraded.empty()) status["degraded"] = degraded;
  return status;
}

TargetStatusReporter::TargetStatusReporter(
    kube::KubeClient* client, std::string path,
    std::function<TargetProgress()> progress, LogSink log)
    : progress_(std::move(progress)),
      writer_(client, std::move(path), "controller", std::move(log)) {}

TargetStatusReporter::~TargetStatusReporter() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TargetStatusReporter::Start(double period_s) {
  thread_ = std::thread([this, period_s] {
    const auto period =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(period_s));
    MutexLock lock(&mu_);
    auto next = std::chrono::steady_clock::now() + period;
    while (!stopping_) {
      // Woken (or spuriously): look at stopping_ again, same deadline.
      if (lock.WaitUntil(&stop_cv_, next)) continue;
      lock.Unlock();
      Report();
      lock.Lock();
      next = std::chrono::steady_clock::now() + period;
    }
  });
}

void TargetStatusReporter::Report() {
  TargetProgress at = progress_();
  MutexLock lock(&mu_);
  writer_.Write(TargetStatusOf(at, writer_.last(), kube::TimeNow()));
}

}  // namespace migserve::manager
