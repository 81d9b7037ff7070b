// The autoscaler on Kubernetes (docs/autoscale.md), as manager/ is the
// controller's: the target it writes is the spec of the controller's
// ServingTarget (`controller --target-resource`), its policy's state an
// annotation of it that only the autoscaler writes (a ServingTarget's
// generation moves with its spec only); or, deprecated, a key of the
// controller's ConfigMap and a key beside it. Its events are Kubernetes
// Events about an object the operator names; its workload may be a
// ServingWorkload's spec, its status what the autoscaler makes of it
// (workload_status.h). `migserve autoscale` parses
// the flags and hands them here.
#ifndef MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_
#define MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "autoscale/autoscaler.h"
#include "autoscale/workload_source.h"
#include "kube/configmap_key.h"
#include "kube/event_recorder.h"
#include "kube/kube_client.h"
#include "kube/object_status.h"
#include "kube/serving_target.h"
#include "kube/serving_workload.h"
#include "util/log_sink.h"
#include "util/status_or.h"

namespace migserve::autoscale {

// The key of the target's ConfigMap that keeps the policy's state, and the
// annotation of the ServingTarget that does.
inline constexpr char kStateKey[] = "autoscale-state.json";
inline constexpr char kStateAnnotation[] = "migserve.io/autoscale-state";

struct KubernetesWiringOptions {
  std::string namespace_;           // empty: the kubeconfig's
  std::string target_resource;      // a ServingTarget, or
  std::string target_configmap;     // a ConfigMap (deprecated), or neither
  bool state_beside_target = true;  // else the caller keeps the state
  std::string events_for;           // "KIND/NAME"; empty: no events
  std::string workload_resource;    // a ServingWorkload; empty: none
};

// The object `events_for` ("KIND/NAME", KIND one of ConfigMap, Deployment,
// Lease, Pod, ServingTarget) names, as an Event's involvedObject in
// `namespace_`.
StatusOr<nlohmann::json> InvolvedObject(const std::string& events_for,
                                        const std::string& namespace_);

// The ServingTarget's texts or the ConfigMap keys, and the event recorder an
// autoscaler writes to. The autoscaler's options point into it: it must outlive
// the autoscaler.
class KubernetesWiring {
 public:
  // Connects with `config` and points `options` (target, state, event) at
  // what `wiring` names; `log` hears the events that could not be recorded.
  static StatusOr<std::unique_ptr<KubernetesWiring>> Wire(
      kube::KubeConfig config, const KubernetesWiringOptions& wiring,
      LogSink log, AutoscaleOptions* options);

  // The ServingWorkload the options name, as a source to follow whose
  // reports are written to its status; nullopt if they name none.
  std::optional<WorkloadSource> Workload();

 private:
  explicit KubernetesWiring(kube::KubeConfig config)
      : client_(std::move(config)) {}

  kube::KubeClient client_;
  std::optional<kube::ConfigMapKey> target_;
  std::optional<kube::ConfigMapKey> state_;
  std::optional<kube::ServingTargetText> resource_;
  std::optional<kube::ServingTargetText> resource_state_;
  std::optional<kube::EventRecorder> events_;
  std::optional<kube::ServingWorkloadText> workload_;
  std::optional<kube::StatusWriter> workload_status_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_
