#include "kubernetes/partition/agent_driver.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/mig_annotations.h"
#include "kubernetes/replica_pod.h"

namespace migserve::kubernetes {

StatusOr<std::vector<GpuLayout>> AgentDriver::Layouts(
    const std::string& name, const nlohmann::json& node) const {
  std::string text = Annotation(node, kAnnotationLayouts);
  if (text.empty()) return std::vector<GpuLayout>();  // not reported yet
  MIGSERVE_ASSIGN_OR_RETURN(
      NodeLayouts layouts,
      ParseLayouts(text, fmt::format("node {} annotation {}", name,
                                     kAnnotationLayouts)));
  return std::move(layouts.gpus);
}

StatusOr<std::string> AgentDriver::Start(const GpuId& gpu,
                                         const mig::GpuModel& model,
                                         const mig::Reconfiguration& change) {
  std::string nonce = fmt::format(
      "{}-{}-{}", getpid(),
      std::chrono::steady_clock::now().time_since_epoch().count(), ++nonce_);
  kube::Annotations notes;
  notes.SetIndexed(kAnnotationMigRequest, gpu.index,
                   FormatRequest(MigRequest{nonce, change, epoch_}, model));
  MIGSERVE_RETURN_IF_ERROR(
      client_->Patch("/api/v1/nodes/" + gpu.node, notes.Patch()).status());
  return nonce;
}

StatusOr<std::optional<Status>> AgentDriver::Check(const GpuId& gpu,
                                                   const std::string& ticket,
                                                   const nlohmann::json& node) {
  std::string text = Annotation(node, StatusKey(gpu.index));
  if (text.empty()) return std::optional<Status>();
  MIGSERVE_ASSIGN_OR_RETURN(MigStatus status,
                            ParseStatus(text, "node " + gpu.node));
  if (status.nonce != ticket) return std::optional<Status>();
  if (status.ok) return std::optional<Status>(Status::Ok());
  return std::optional<Status>(Status::Unavailable(
      fmt::format("the agent on {} says: {}", gpu.node, status.error)));
}

PodDevice AgentDriver::ReplicaDevice(const InstanceRef& at) const {
  return {DevicePluginResources(at.model->profiles[at.instance.profile]),
          nlohmann::ordered_json()};
}

}  // namespace migserve::kubernetes
