// The reconcile loop's step (`migserve controller`): given the target
// deployment, brings the cluster there with the journaled Controller if it
// is not there already, and keeps what an operator watches: Prometheus
// metrics and a progress summary, both safe to read from another thread.
#ifndef MIGSERVE_CONTROLLER_RECONCILER_H_
#define MIGSERVE_CONTROLLER_RECONCILER_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "controller/controller.h"
#include "controller/degraded_target.h"
#include "controller/reconciler_metrics.h"

namespace migserve::controller {

class Reconciler {
 public:
  // `backend` and `journal` are not owned and outlive the reconciler.
  Reconciler(cluster::ClusterBackend* backend, Journal* journal,
             ControllerOptions options = {});
  ~Reconciler();

  // Moves the cluster to `target` unless it holds it already; decides
  // only, the Controller does. A service keeps at least min(before, after):
  // "before" is the previous target's requirement, or, for the first target
  // this process sees, what the service has now. When
  // ControllerOptions::superseded stops the transition for a newer target,
  // returns OK at once (result kSuperseded); "before" for the next target
  // is then the stopped transition's floor, min(its before, its after).
  // When the cluster cannot hold `target` (a node or GPU lost), moves to
  // the part of it that fits (FitTarget), says so (a progress line, the
  // migserve_degraded gauge, /progress and Health), and moves back to the
  // whole target once the cluster can hold it again, also when another
  // controller on the same journal saw the loss. A service the loss left
  // below its floor keeps what it has.
  Status Reconcile(const deployment::Deployment& target);

  // OK unless the last reconcile failed (then Unavailable with its error):
  // what /healthz answers.
  Status Health() const;
  // Prometheus text exposition of the counters and gauges; label values
  // escaped as its text format says.
  std::string Metrics() const;
  // {state, last_error, plans, actions: {kind: {ok, failed}}, services,
  // log: the last progress lines}.
  nlohmann::json Progress() const;

 private:
  class MeteredBackend;

  // One pass of Reconcile.
  Status ReconcileOnce(const deployment::Deployment& target);
  // FitTarget, with the change of state said when it changes.
  std::optional<DegradedTarget> Fit(const cluster::ClusterState& observed,
                                    const deployment::Deployment& target);
  // Finishes the pass: records `result` and returns `status`.
  Status Finish(ReconcileResult result, const Status& status);
  void Observed(const cluster::ClusterState& state,
                const deployment::Deployment& target);
  // The floors a stopped transition kept, min(its before, its after): what
  // each service must keep on the way to the next target.
  static std::map<std::string, double> StoppedFloors(
      const TransitionGoal& stopped);

  ReconcilerMetrics metrics_;
  std::unique_ptr<MeteredBackend> backend_;
  Journal* journal_;
  ControllerOptions options_;
  // What each service must keep now (see Reconcile); unknown before the
  // first target is reached or stopped.
  std::optional<std::map<std::string, double>> required_now_;
  // The degraded target's description while the cluster cannot hold the
  // target; "" otherwise. Kept in the journal; read from it at
  // construction.
  std::string degraded_;
};

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_RECONCILER_H_
