#include "kubernetes/dra_objects.h"

#include <fmt/format.h>

#include "boundary/checked_name.h"
#include "boundary/json_fields.h"
#include "dra/nvidia_devices.h"
#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {

std::string DraSelector(const mig::Profile& profile, const std::string& uuid) {
  std::string selector =
      fmt::format("{} == '{}'", dra::AttributeCel("profile"), profile.name);
  if (!uuid.empty()) {
    selector +=
        fmt::format(" && {} == '{}'", dra::AttributeCel("parentUUID"), uuid);
  }
  return selector;
}

Json DraClaim(const std::string& name, const kube::Labels& labels,
              const std::string& device, const std::string& selector,
              const ServingSpec& spec) {
  kube::Annotations notes;
  notes.Set(kAnnotationDevice, device);
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", ObjectMetadata(ObjectLabel(name), labels, notes, spec)},
      {"spec",
       {{"devices",
         {{"requests",
           Json::array(
               {{{"name", "mig"},
                 {"exactly",
                  {{"deviceClassName", dra::kMigDeviceClass},
                   {"selectors",
                    Json::array(
                        {{{"cel", {{"expression", selector}}}}})}}}}})}}}}}};
}

Json HoldPod(const std::string& name, const kube::Labels& labels,
             const std::string& device, const std::string& node,
             const ServingSpec& spec) {
  kube::Annotations notes;
  notes.Set(kAnnotationDevice, device);
  Json container = {
      {"name", "hold"},
      {"image", kPauseImage},
      {"securityContext", RestrictedContainerSecurity()},
      {"resources", {{"claims", Json::array({{{"name", "mig"}}})}}}};
  Json pod_spec = {
      {"nodeSelector", {{"kubernetes.io/hostname", node}}},
      {"terminationGracePeriodSeconds", 0},
      {"securityContext",
       {{"runAsNonRoot", true},
        {"runAsUser", 65535},
        {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
      {"containers", Json::array({std::move(container)})},
      {"resourceClaims",
       Json::array({{{"name", "mig"}, {"resourceClaimName", name}}})}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", ObjectMetadata(ObjectLabel(name), labels, notes, spec)},
          {"spec", std::move(pod_spec)}};
}

const nlohmann::json* AllocationResults(const nlohmann::json& claim) {
  const nlohmann::json* status = ObjectAt(claim, "status");
  const nlohmann::json* allocation =
      status == nullptr ? nullptr : ObjectAt(*status, "allocation");
  const nlohmann::json* devices =
      allocation == nullptr ? nullptr : ObjectAt(*allocation, "devices");
  return devices == nullptr ? nullptr : ArrayAt(*devices, "results");
}

}  // namespace migserve::kubernetes
