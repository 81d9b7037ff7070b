// What an operator watches of the reconcile loop, safe to read from another
// thread while the loop runs: the state, the passes by result, the actions
// by kind and result, the services' capacity against their requirement,
// and the last progress lines; as Prometheus text and as a JSON summary.
#ifndef MIGSERVE_CONTROLLER_RECONCILER_METRICS_H_
#define MIGSERVE_CONTROLLER_RECONCILER_METRICS_H_

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cluster/action.h"
#include "util/mutex.h"
#include "util/status.h"

namespace migserve::controller {

enum class ReconcilerState { kStarting, kIdle, kTransition, kError };
// What one reconcile pass did: nothing (the cluster held the target), a
// transition, a transition a newer target stopped, or failed.
enum class ReconcileResult { kOk, kIdle, kSuperseded, kError };

// "starting", "idle", "transition", "error".
std::string_view StateName(ReconcilerState state);

class ReconcilerMetrics {
 public:
  void Transitioning();
  // Records the end of a pass with `status` (its error, if any, is the
  // health's).
  void Finished(ReconcileResult result, const Status& status);
  void PlansMade(int plans);
  void ActionStarted();
  void ActionEnded(cluster::ActionKind kind, bool ok);
  // A start the backend refused: ended at once, failed.
  void ActionRefused(cluster::ActionKind kind);
  // The services' ready capacity and required rate, and the GPUs holding
  // at least one replica, last observed.
  void Observed(std::map<std::string, double> capacity,
                std::map<std::string, double> required, int gpus_held);
  // The cluster cannot hold the target and the controller serves what fits
  // (controller/degraded_target.h), described; "" once it holds the target.
  void Degraded(std::string description);
  // Keeps the last 50 progress lines.
  void Log(const std::string& line);

  // OK unless the last pass failed (then Unavailable with its error) or
  // the cluster cannot hold the target (Unavailable, "degraded: ...").
  Status Health() const;
  // Prometheus text exposition; label values escaped as its text format
  // says.
  std::string Text() const;
  // {state, last_error, degraded (a description, or null), plans, running,
  // actions: {kind: {ok, failed}}, services: {name: {capacity, required}},
  // gpus_held, log}.
  nlohmann::json Progress() const;

 private:
  mutable Mutex mu_;
  ReconcilerState state_ GUARDED_BY(mu_) = ReconcilerState::kStarting;
  std::string last_error_ GUARDED_BY(mu_);
  std::string degraded_ GUARDED_BY(mu_);
  std::map<ReconcileResult, int> passes_ GUARDED_BY(mu_);
  // (kind, ok)
  std::map<std::pair<cluster::ActionKind, bool>, int> actions_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  int plans_ GUARDED_BY(mu_) = 0;
  std::map<std::string, double> capacity_ GUARDED_BY(mu_);
  std::map<std::string, double> required_ GUARDED_BY(mu_);
  int gpus_held_ GUARDED_BY(mu_) = 0;
  std::deque<std::string> log_ GUARDED_BY(mu_);
};

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_RECONCILER_METRICS_H_
