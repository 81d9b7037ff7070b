#include "kube/pod_ready.h"

namespace migserve::kube {

bool PodReady(const nlohmann::json& pod) {
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object() ||
      meta->contains("deletionTimestamp")) {
    return false;
  }
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return false;
  for (const auto& c : *conditions) {
    if (c.is_object() && c.value("type", nlohmann::json()) == "Ready" &&
        c.value("status", nlohmann::json()) == "True") {
      return true;
    }
  }
  return false;
}

bool PodFailed(const nlohmann::json& pod) {
  auto status = pod.find("status");
  return status != pod.end() && status->is_object() &&
         status->value("phase", nlohmann::json()) == "Failed";
}

}  // namespace migserve::kube
