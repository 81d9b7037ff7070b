#include "autoscale/kubernetes/kubernetes_wiring.h"

#include <fmt/format.h>

#include <map>

#include "autoscale/kubernetes/workload_status.h"
#include "kube/micro_time.h"
#include "manager/target_source.h"

namespace migserve::autoscale {

StatusOr<nlohmann::json> InvolvedObject(const std::string& events_for,
                                        const std::string& namespace_) {
  static const std::map<std::string, std::string> kApiVersions = {
      {"ConfigMap", "v1"},
      {"ServingTarget", "migserve.io/v1alpha1"},
      {"Deployment", "apps/v1"},
      {"Lease", "coordination.k8s.io/v1"},
      {"Pod", "v1"}};
  size_t slash = events_for.find('/');
  std::string kind = events_for.substr(0, slash);
  auto api = kApiVersions.find(kind);
  if (slash == std::string::npos || slash + 1 == events_for.size() ||
      api == kApiVersions.end()) {
    return Status::InvalidArgument(fmt::format(
        "--events-for: '{}': expected KIND/NAME, KIND one of ConfigMap, "
        "Deployment, Lease, Pod, ServingTarget",
        events_for));
  }
  return nlohmann::json{{"apiVersion", api->second},
                        {"kind", kind},
                        {"name", events_for.substr(slash + 1)},
                        {"namespace", namespace_}};
}

StatusOr<std::unique_ptr<KubernetesWiring>> KubernetesWiring::Wire(
    kube::KubeConfig config, const KubernetesWiringOptions& wiring, LogSink log,
    AutoscaleOptions* options) {
  std::string namespace_ =
      wiring.namespace_.empty() ? config.namespace_ : wiring.namespace_;
  std::unique_ptr<KubernetesWiring> k(new KubernetesWiring(std::move(config)));
  if (!wiring.target_resource.empty()) {
    auto& target =
        k->resource_.emplace(&k->client_, namespace_, wiring.target_resource);
    options->target = {
        target.Describe(), [&target] { return target.Read(); },
        [&target](const std::string& text) { return target.Write(text); }};
    if (wiring.state_beside_target) {
      auto& state = k->resource_state_.emplace(
          &k->client_, namespace_, wiring.target_resource,
          kube::LabelKey(kStateAnnotation));
      options->state = {
          state.Describe(), [&state] { return state.Read(); },
          [&state](const std::string& text) { return state.Put(text); }};
    }
  } else if (!wiring.target_configmap.empty()) {
    // The key the controller reads (controller --target-configmap).
    auto& target =
        k->target_.emplace(&k->client_, namespace_, wiring.target_configmap,
                           manager::TargetOptions().key);
    options->target = {
        target.Describe(), [&target] { return target.Read(); },
        [&target](const std::string& text) { return target.Write(text); }};
    if (wiring.state_beside_target) {
      // Beside the target, in a key only the autoscaler writes: put
      // whatever the map's version (the target's writes move it on).
      auto& state = k->state_.emplace(&k->client_, namespace_,
                                      wiring.target_configmap, kStateKey);
      options->state = {
          state.Describe(), [&state] { return state.Read(); },
          [&state](const std::string& text) { return state.Put(text); }};
    }
  }
  if (!wiring.workload_resource.empty()) {
    k->workload_.emplace(&k->client_, namespace_, wiring.workload_resource);
    k->workload_status_.emplace(
        &k->client_,
        kube::ServingWorkloadPath(namespace_, wiring.workload_resource),
        "autoscale", log);
  }
  if (!wiring.events_for.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json involved,
                              InvolvedObject(wiring.events_for, namespace_));
    auto& events = k->events_.emplace(&k->client_, std::move(involved),
                                      "migserve-autoscale");
    options->event = events.Sink(log);
  }
  return k;
}

std::optional<WorkloadSource> KubernetesWiring::Workload() {
  if (!workload_) return std::nullopt;
  kube::ServingWorkloadText* resource = &*workload_;
  kube::StatusWriter* status = &*workload_status_;
  return WorkloadSource{
      resource->Describe(), resource->Name(),
      [resource]() -> StatusOr<WorkloadText> {
        MIGSERVE_ASSIGN_OR_RETURN(kube::ServingWorkloadSpec spec,
                                  resource->Read());
        return WorkloadText{std::move(spec.yaml), spec.generation};
      },
      [status](const WorkloadReport& report) {
        status->Write(
            WorkloadStatusOf(report, status->last(), kube::TimeNow()));
      }};
}

}  // namespace migserve::autoscale
