#include "kubernetes/dra_classes.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "boundary/checked_name.h"
#include "boundary/plain_name.h"
#include "dra/nvidia_devices.h"
#include "kube/yaml_writer.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {

using Json = nlohmann::ordered_json;

std::string DeviceClassName(const mig::Profile& profile) {
  return DnsLabel("migserve-mig-" + profile.name);
}

std::string DeviceClasses(const ClusterState& state) {
  std::map<std::string, const mig::Profile*> profiles;
  for (const GpuState& g : state.gpus) {
    for (const Slot& s : g.slots) {
      const mig::Profile& p = g.model->profiles[s.instance.profile];
      profiles.emplace(p.name, &p);
    }
  }
  std::vector<Json> classes;
  std::vector<std::string> without;
  for (const auto& [name, profile] : profiles) {
    std::string selector =
        fmt::format("device.driver == '{}' && {} == 'mig' && {} == '{}'",
                    dra::kAttributeDomain, dra::AttributeCel("type"),
                    dra::AttributeCel("profile"), name);
    Json spec = {
        {"selectors", Json::array({{{"cel", {{"expression", selector}}}}})}};
    std::string resource = MigResourceName(*profile);
    // The name after the domain must be a qualified name, as a label value.
    if (IsPlainName(resource.substr(resource.find('/') + 1))) {
      spec["extendedResourceName"] = resource;
    } else {
      without.push_back(name);
    }
    classes.push_back({{"apiVersion", "resource.k8s.io/v1"},
                       {"kind", "DeviceClass"},
                       {"metadata",
                        {{"name", ObjectLabel(DeviceClassName(*profile)).str()},
                         {"labels", ManagedLabels().ToJson()}}},
                       {"spec", std::move(spec)}});
  }
  std::string header =
      "# DeviceClasses written by migserve export (dra flavour): per MIG\n"
      "# profile the deployment places, NVIDIA's MIG devices of that profile\n"
      "# as the extended resource nvidia.com/mig-<profile> (KEP-5004; feature\n"
      "# gate DRAExtendedResource, alpha in Kubernetes 1.34, beta in 1.36), "
      "so\n"
      "# that pods keeping nvidia.com/mig-* limits get a slice of the planned\n"
      "# profile, placed first-fit. The replicas' claims land on the plan.\n";
  if (!without.empty()) {
    header += fmt::format(
        "# No extended resource for {}: not a valid resource name.\n",
        fmt::join(without, ", "));
  }
  return header + kube::ToYaml(classes);
}

}  // namespace migserve::kubernetes
