#include "cluster/kubernetes/export.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "cluster/kubernetes/names.h"
#include "cluster/kubernetes/replica_pod.h"
#include "cluster/kubernetes/yaml_writer.h"

namespace migserve::cluster::kubernetes {
namespace {

// One replica with where it is.
struct Placed {
  const GpuState* gpu;
  const Slot* slot;
};

std::string ModelOf(const std::vector<workload::Service>& services,
                    const std::string& name) {
  for (const workload::Service& s : services) {
    if (s.name == name) return s.model;
  }
  return name;
}

Json Metadata(const std::string& name, const Json& labels,
              const Json& annotations) {
  Json meta = {{"name", name}, {"labels", labels}};
  if (!annotations.empty()) meta["annotations"] = annotations;
  return meta;
}

Json WorkloadDeployment(const std::string& name, const Json& labels,
                        const Json& annotations, int replicas, Json pod_spec) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", Metadata(name, labels, annotations)},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}, {"annotations", annotations}}},
              {"spec", std::move(pod_spec)}}}}}};
}

std::vector<Json> DevicePluginObjects(
    const std::vector<Placed>& replicas, const std::map<int, int>& indexes,
    const mig::GpuModel& gpu, const std::vector<workload::Service>& services,
    const ExportOptions& options) {
  // Replicas grouped by (service, node, profile, batch, procs).
  using Key = std::tuple<std::string, std::string, int, int, int>;
  std::map<Key, std::vector<Placed>> groups;
  std::map<std::tuple<std::string, std::string, int>, int> same_name;
  for (const Placed& p : replicas) {
    const Replica& r = *p.slot->replica;
    Key key{r.service, p.gpu->node, p.slot->instance.profile, r.batch, r.procs};
    if (groups[key].empty()) {
      ++same_name[{r.service, p.gpu->node, p.slot->instance.profile}];
    }
    groups[key].push_back(p);
  }
  std::vector<Json> objects;
  for (const auto& [key, members] : groups) {
    const auto& [service, node, profile, batch, procs] = key;
    const mig::Profile& p = gpu.profiles[profile];
    const std::string& profile_name = p.name;
    std::string name = fmt::format("{}-{}-{}", service, node, profile_name);
    if (same_name[{service, node, profile}] > 1) {
      name += fmt::format("-b{}-p{}", batch, procs);
    }
    Json labels = {{kManagedBy, kManager},
                   {kLabelService, service},
                   {kLabelNode, node},
                   {kLabelProfile, profile_name}};
    std::string placements;
    for (const Placed& m : members) {
      if (!placements.empty()) placements += ",";
      placements +=
          fmt::format("{}:{}", indexes.at(m.gpu->id), m.slot->instance.start);
    }
    const Replica& first = *members.front().slot->replica;
    Json annotations = ReplicaAnnotations(first);
    annotations[kAnnotationPlacements] = placements;
    Json container =
        ServerContainer(first, ModelOf(services, service), options.serving);
    container["resources"] = DevicePluginResources(p);
    objects.push_back(WorkloadDeployment(DnsLabel(name), labels, annotations,
                                         static_cast<int>(members.size()),
                                         PodSpec(node, std::move(container))));
  }
  return objects;
}

// The DRA driver's device name: gpu-<minor>-mig-<profile without dots>-
// <first slice>[-<last slice>].
std::string DraDeviceName(int index, const mig::Profile& profile, int start) {
  std::string bare;
  for (char c : profile.name) {
    if (c != '.') bare += c;
  }
  std::string slices = std::to_string(start);
  if (profile.memory_slices > 1) {
    slices += fmt::format("-{}", start + profile.memory_slices - 1);
  }
  return fmt::format("gpu-{}-mig-{}-{}", index, bare, slices);
}

std::vector<Json> DraObjects(const std::vector<Placed>& replicas,
                             const std::map<int, int>& indexes,
                             const mig::GpuModel& gpu,
                             const std::vector<workload::Service>& services,
                             const ExportOptions& options) {
  std::vector<Json> objects;
  for (const Placed& p : replicas) {
    const Replica& r = *p.slot->replica;
    const mig::Profile& profile = gpu.profiles[p.slot->instance.profile];
    int start = p.slot->instance.start;
    int index = indexes.at(p.gpu->id);
    std::string name =
        ReplicaName(r.service, p.gpu->node, index, profile, start);
    Json labels = ReplicaLabels(r.service, p.gpu->node, index, profile, start);
    std::string selector = fmt::format(
        "device.attributes['gpu.nvidia.com'].profile == '{}' && "
        "device.attributes['gpu.nvidia.com'].parentMinor == {}",
        profile.name, index);
    Json claim = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaim"},
        {"metadata",
         Metadata(name, labels,
                  {{kAnnotationDevice, DraDeviceName(index, profile, start)}})},
        {"spec",
         {{"devices",
           {{"requests",
             Json::array(
                 {{{"name", "mig"},
                   {"exactly",
                    {{"deviceClassName", "mig.nvidia.com"},
                     {"selectors",
                      Json::array(
                          {{{"cel", {{"expression", selector}}}}})}}}}})}}}}}};
    objects.push_back(std::move(claim));
    Json container =
        ServerContainer(r, ModelOf(services, r.service), options.serving);
    container["resources"] = {{"claims", Json::array({{{"name", "mig"}}})}};
    Json claims = {
        {"resourceClaims",
         Json::array({{{"name", "mig"}, {"resourceClaimName", name}}})}};
    Json deployment =
        WorkloadDeployment(name, labels, ReplicaAnnotations(r), 1,
                           PodSpec(p.gpu->node, std::move(container), claims));
    // Two pods must never hold the claim at once.
    deployment["spec"]["strategy"] = {{"type", "Recreate"}};
    objects.push_back(std::move(deployment));
  }
  return objects;
}

}  // namespace

std::string MigPartedConfig(const ClusterState& state,
                            const mig::GpuModel& gpu) {
  std::map<int, int> indexes = DeviceIndexes(state);
  Json configs = Json::object();
  for (const GpuState& g : state.gpus) {
    Json devices = Json::object();
    for (const Slot& s : g.slots) {
      const std::string& name = gpu.profiles[s.instance.profile].name;
      devices[name] = devices.value(name, 0) + 1;
    }
    Json entry = {{"devices", Json::array({indexes.at(g.id)})},
                  {"mig-enabled", true},
                  {"mig-devices", devices}};
    if (!configs.contains(g.node)) configs[g.node] = Json::array();
    configs[g.node].push_back(std::move(entry));
  }
  std::string header = fmt::format(
      "# mig-parted v1 config written by migserve export ({}): one config\n"
      "# per node, applied by NVIDIA's MIG manager when the node's label\n"
      "# nvidia.com/mig.config names it. mig-parted re-creates every GPU\n"
      "# whose layout differs, so those GPUs must be idle; the migserve agent\n"
      "# changes only the instances that differ.\n",
      gpu.name);
  return header + ToYaml({{{"version", "v1"}, {"mig-configs", configs}}});
}

StatusOr<std::string> ReplicaObjects(
    const ClusterState& state, const mig::GpuModel& gpu,
    const std::vector<workload::Service>& services,
    const ExportOptions& options) {
  std::vector<Placed> replicas;
  for (const GpuState& g : state.gpus) {
    MIGSERVE_RETURN_IF_ERROR(
        CheckLabelValue(g.node, fmt::format("node of GPU {}", g.id)));
    for (const Slot& s : g.slots) {
      if (!s.replica) continue;
      MIGSERVE_RETURN_IF_ERROR(CheckLabelValue(
          s.replica->service, fmt::format("service on GPU {}", g.id)));
      replicas.push_back({&g, &s});
    }
  }
  std::vector<Json> objects =
      options.flavor == Flavor::kDevicePlugin
          ? DevicePluginObjects(replicas, DeviceIndexes(state), gpu, services,
                                options)
          : DraObjects(replicas, DeviceIndexes(state), gpu, services, options);
  std::string header = fmt::format(
      "# Kubernetes objects written by migserve export ({} flavour, {}):\n"
      "# {}\n",
      options.flavor == Flavor::kDevicePlugin ? "device-plugin" : "dra",
      gpu.name,
      options.flavor == Flavor::kDevicePlugin
          ? "per (service, node, profile) a Deployment requesting\n"
            "# nvidia.com/mig-<profile> (device plugin, mixed strategy)."
          : "per replica a ResourceClaim for NVIDIA's DRA driver\n"
            "# (DynamicMIG) and a one-replica Deployment using it.");
  return header + ToYaml(objects);
}

StatusOr<ExportedFiles> Export(const ClusterState& state,
                               const mig::GpuModel& gpu,
                               const std::vector<workload::Service>& services,
                               const ExportOptions& options) {
  ExportedFiles files;
  files.mig_parted = MigPartedConfig(state, gpu);
  MIGSERVE_ASSIGN_OR_RETURN(files.replicas,
                            ReplicaObjects(state, gpu, services, options));
  return files;
}

}  // namespace migserve::cluster::kubernetes
