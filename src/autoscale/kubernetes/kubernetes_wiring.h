// The autoscaler on Kubernetes (docs/autoscale.md), as manager/ is the
// controller's: the target it writes is a key of the controller's ConfigMap
// (the key `controller --target-configmap` reads), its policy's state a key
// beside it that only the autoscaler writes, and its events Kubernetes
// Events about an object the operator names. `migserve autoscale` parses
// the flags and hands them here.
#ifndef MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_
#define MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "autoscale/autoscaler.h"
#include "kube/configmap_key.h"
#include "kube/event_recorder.h"
#include "kube/kube_client.h"
#include "util/log_sink.h"
#include "util/status_or.h"

namespace migserve::autoscale {

// The key of the target's ConfigMap that keeps the policy's state.
inline constexpr char kStateKey[] = "autoscale-state.json";

struct KubernetesWiringOptions {
  std::string namespace_;           // empty: the kubeconfig's
  std::string target_configmap;     // empty: the target is not a ConfigMap
  bool state_beside_target = true;  // else the caller keeps the state
  std::string events_for;           // "KIND/NAME"; empty: no events
};

// The object `events_for` ("KIND/NAME", KIND one of ConfigMap, Deployment,
// Lease, Pod) names, as an Event's involvedObject in `namespace_`.
StatusOr<nlohmann::json> InvolvedObject(const std::string& events_for,
                                        const std::string& namespace_);

// The ConfigMap keys and the event recorder an autoscaler writes to. The
// autoscaler's options point into it: it must outlive the autoscaler.
class KubernetesWiring {
 public:
  // Connects with `config` and points `options` (target, state, event) at
  // what `wiring` names; `log` hears the events that could not be recorded.
  static StatusOr<std::unique_ptr<KubernetesWiring>> Wire(
      kube::KubeConfig config, const KubernetesWiringOptions& wiring,
      LogSink log, AutoscaleOptions* options);

 private:
  explicit KubernetesWiring(kube::KubeConfig config)
      : client_(std::move(config)) {}

  kube::KubeClient client_;
  std::optional<kube::ConfigMapKey> target_;
  std::optional<kube::ConfigMapKey> state_;
  std::optional<kube::EventRecorder> events_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_KUBERNETES_KUBERNETES_WIRING_H_
