#include "kubernetes/partition/dra_check.h"

#include <fmt/format.h>

#include "boundary/json_fields.h"
#include "dra/nvidia_devices.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/dra_slices.h"

namespace migserve::kubernetes {
namespace {

using json = nlohmann::json;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

// Whether `device` is one of the driver's partitionable MIG devices: a
// gpu-<minor>-mig-... device that consumes its GPU's counters (DynamicMIG;
// the instances that exist without it consume none).
bool Partitionable(const json& device) {
  std::string name = StringAt(device, "name").value_or("");
  if (name.rfind("gpu-", 0) != 0 || name.find("-mig-") == std::string::npos) {
    return false;
  }
  const json* counters = ArrayAt(device, "consumesCounters");
  return counters != nullptr && !counters->empty();
}

}  // namespace

StatusOr<DraNodes> ReadDraNodes(kube::KubeClient* client,
                                const std::string& node) {
  DraNodes out;
  std::string query =
      fmt::format("fieldSelector=spec.driver%3D{}", dra::kAttributeDomain);
  if (!node.empty()) {
    query += fmt::format(",spec.nodeName%3D{}", kube::KubeClient::Escape(node));
  }
  auto slices = client->List(kSlices, query);
  if (slices.status().code() == Status::Code::kNotFound) return out;
  MIGSERVE_RETURN_IF_ERROR(slices.status());
  out.api = true;
  // What a cluster says is read leniently: a field of another type is
  // absent.
  const json* items = ArrayAt(*slices, "items");
  if (items == nullptr) return out;
  for (const json& slice : *items) {
    const json* spec = ObjectAt(slice, "spec");
    if (spec == nullptr) continue;
    std::string on = StringAt(*spec, "nodeName").value_or("");
    std::string name = StringField(slice, "metadata", "name").value_or("?");
    if (StringAt(*spec, "driver") != dra::kAttributeDomain || on.empty() ||
        (!node.empty() && on != node)) {
      continue;
    }
    out.driver.emplace(on, name);
    const json* devices = ArrayAt(*spec, "devices");
    if (devices == nullptr) continue;
    for (const json& device : *devices) {
      if (Partitionable(device)) {
        out.dynamic.emplace(on, name);
        break;
      }
    }
  }
  return out;
}

Status CheckAgentMayPartition(kube::KubeClient* client,
                              const std::string& node) {
  auto seen = ReadDraNodes(client, node);
  if (!seen.ok()) {
    return Status::FailedPrecondition(fmt::format(
        "node {}: cannot tell whether NVIDIA's DRA driver partitions its "
        "GPUs (list resource.k8s.io/resourceslices: {})",
        node, seen.status().message()));
  }
  auto it = seen->dynamic.find(node);
  if (it == seen->dynamic.end()) return Status::Ok();
  return Status::FailedPrecondition(fmt::format(
      "node {}: NVIDIA's DRA driver partitions its GPUs itself (DynamicMIG: "
      "ResourceSlice {} announces MIG devices that consume the GPU's "
      "counters); the agent and the driver would each destroy the other's "
      "instances, so the agent does not run here: keep one of them on the "
      "node (docs/kubernetes.md, \"Choosing who partitions the GPUs\")",
      node, it->second));
}

StatusOr<std::vector<Finding>> CheckDra(kube::KubeClient* client,
                                        Partitioner partitioner) {
  MIGSERVE_ASSIGN_OR_RETURN(DraNodes seen, ReadDraNodes(client));
  std::vector<Finding> out;
  if (partitioner != Partitioner::kDra) {
    const char* who = partitioner == Partitioner::kAgent
                          ? "the migserve agent"
                          : "the GPU Operator's MIG manager";
    for (const auto& [node, slice] : seen.dynamic) {
      out.push_back(
          {true, fmt::format("node {}: NVIDIA's DRA driver partitions its "
                             "GPUs (DynamicMIG, ResourceSlice {}), so {} "
                             "and the driver would destroy each other's "
                             "instances: turn DynamicMIG off there or keep {} "
                             "off the node",
                             node, slice, who, who)});
    }
    if (seen.dynamic.empty()) {
      out.push_back({false,
                     "no node's GPUs are partitioned by NVIDIA's DRA "
                     "driver (DynamicMIG)"});
    }
    return out;
  }
  if (!seen.api) {
    out.push_back({true,
                   "the API server serves no resource.k8s.io/v1 "
                   "ResourceSlices: DRA is GA from Kubernetes 1.34"});
    return out;
  }
  out.push_back({false, "resource.k8s.io/v1 is served"});
  if (seen.driver.empty()) {
    out.push_back(
        {true, fmt::format("no ResourceSlice of NVIDIA's DRA driver ({}): "
                           "install it (the GPU Operator's DRA mode or the "
                           "driver's Helm chart)",
                           dra::kAttributeDomain)});
    return out;
  }
  for (const auto& [node, slice] : seen.driver) {
    if (seen.dynamic.count(node) > 0) {
      out.push_back({false, fmt::format("node {}: partitionable MIG devices "
                                        "(DynamicMIG)",
                                        node)});
    } else {
      out.push_back(
          {true, fmt::format("node {}: the DRA driver publishes no "
                             "partitionable MIG device (ResourceSlice {}): "
                             "turn on the driver's DynamicMIG feature gate "
                             "(alpha, off by default) and, before Kubernetes "
                             "1.36, DRAPartitionableDevices on the API "
                             "server, scheduler and kubelet",
                             node, slice)});
    }
  }
  auto mig_class = client->Get(fmt::format(
      "/apis/resource.k8s.io/v1/deviceclasses/{}", dra::kMigDeviceClass));
  if (mig_class.ok()) {
    out.push_back({false, fmt::format("DeviceClass {}", dra::kMigDeviceClass)});
  } else {
    out.push_back({true, fmt::format("no DeviceClass {} ({}): the claims "
                                     "export writes ask for it; the driver's "
                                     "chart installs it",
                                     dra::kMigDeviceClass,
                                     mig_class.status().message())});
  }
  return out;
}

StatusOr<Finding> CheckDraOffers(kube::KubeClient* client,
                                 const ClusterState& state) {
  MIGSERVE_ASSIGN_OR_RETURN(
      json slices,
      client->List(kSlices, fmt::format("fieldSelector=spec.driver%3D{}",
                                        dra::kAttributeDomain)));
  const json* items = ArrayAt(slices, "items");
  MIGSERVE_ASSIGN_OR_RETURN(
      SliceGpus gpus,
      GpusOfSlices(items == nullptr ? std::vector<json>{}
                                    : items->get<std::vector<json>>(),
                   "resourceslices"));
  Status covered = CheckSlicesCover(gpus, state, "resourceslices");
  if (!covered.ok()) return Finding{true, covered.message()};
  return Finding{false,
                 "the driver's slices offer a device for every instance the "
                 "deployment places"};
}

}  // namespace migserve::kubernetes
