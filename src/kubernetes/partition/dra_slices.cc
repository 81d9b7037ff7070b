#include "kubernetes/partition/dra_slices.h"

#include <fmt/format.h>

#include <set>
#include <string_view>

#include "boundary/json_fields.h"
#include "boundary/plain_name.h"
#include "dra/nvidia_devices.h"
#include "kubernetes/cluster_model.h"
#include "mig/gpu_catalog.h"

namespace migserve::kubernetes {
namespace {

// Whether `name` is the driver's name of a whole GPU, gpu-<minor>, or
// (`mig`) of a MIG device on one, gpu-<minor>-mig-...; sets `minor`.
bool ParseGpuDevice(const std::string& name, int* minor, bool* mig) {
  constexpr std::string_view kPrefix = "gpu-", kMig = "-mig-";
  if (name.size() <= kPrefix.size() ||
      name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return false;
  }
  size_t end = name.find_first_not_of("0123456789", kPrefix.size());
  *mig = end != std::string::npos;
  if (!*mig) end = name.size();
  if (end == kPrefix.size() || end - kPrefix.size() > 4 ||
      (*mig && name.compare(end, kMig.size(), kMig) != 0)) {
    return false;
  }
  *minor = std::stoi(name.substr(kPrefix.size(), end - kPrefix.size()));
  return true;
}

// The string value of attribute `key` of `device`, if it has one.
std::optional<std::string> Attribute(const nlohmann::json& device,
                                     const char* key) {
  const nlohmann::json* attributes = ObjectAt(device, "attributes");
  const nlohmann::json* value =
      attributes == nullptr ? nullptr : ObjectAt(*attributes, key);
  return value == nullptr ? std::nullopt : StringAt(*value, "string");
}

}  // namespace

StatusOr<SliceGpus> GpusOfSlices(const std::vector<nlohmann::json>& slices,
                                 const std::string& source) {
  SliceGpus gpus;
  std::map<std::pair<std::string, int>, std::set<std::string>> offered;
  std::map<std::string, std::pair<std::string, int>> by_uuid;
  for (const nlohmann::json& slice : slices) {
    const nlohmann::json* spec = ObjectAt(slice, "spec");
    if (spec == nullptr || StringAt(*spec, "driver") != dra::kAttributeDomain) {
      continue;
    }
    std::string name = StringField(slice, "metadata", "name").value_or("");
    std::string node = StringAt(*spec, "nodeName").value_or("");
    const nlohmann::json* devices = ArrayAt(*spec, "devices");
    if (devices == nullptr) continue;
    for (const nlohmann::json& device : *devices) {
      std::string device_name = StringAt(device, "name").value_or("");
      int minor = -1;
      bool mig = false;
      if (!ParseGpuDevice(device_name, &minor, &mig)) continue;
      if (mig) {
        offered[{node, minor}].insert(device_name);
        continue;
      }
      std::optional<std::string> uuid = Attribute(device, "uuid");
      if (!uuid || !IsPlainName(*uuid) || node.empty()) {
        return Status::InvalidArgument(
            fmt::format("{}: ResourceSlice {}: device {}: no node, or no plain "
                        "attributes.uuid.string",
                        source, name, device_name));
      }
      // A GPU's UUID is its own: two devices with one are a forged or
      // broken slice, and a claim pinned to it could land on either.
      auto [seen, fresh] = by_uuid.emplace(*uuid, std::pair{node, minor});
      if (!fresh && seen->second != std::pair{node, minor}) {
        return Status::InvalidArgument(fmt::format(
            "{}: ResourceSlice {}: device {} of node {}: uuid {} is GPU {} "
            "of node {} already",
            source, name, device_name, node, *uuid, seen->second.second,
            seen->second.first));
      }
      gpus[{node, minor}] = {
          *uuid, Attribute(device, "productName").value_or(""), name, {}};
    }
  }
  // A MIG device of a GPU no slice lists is no device to claim.
  for (auto& [at, gpu] : gpus) gpu.mig_devices = std::move(offered[at]);
  return gpus;
}

Status CheckSlicesCover(const SliceGpus& gpus, const ClusterState& state,
                        const std::string& source) {
  for (const GpuState& g : state.gpus) {
    if (!g.HasReplica()) continue;
    auto listed = gpus.find({g.id.node, g.id.index});
    if (listed == gpus.end()) {
      return Status::InvalidArgument(fmt::format(
          "{}: no ResourceSlice of {} lists GPU {} of node {}, which the "
          "deployment serves on",
          source, dra::kAttributeDomain, g.id.index, g.id.node));
    }
    const SliceGpu& gpu = listed->second;
    if (!gpu.product.empty()) {
      StatusOr<const mig::GpuModel*> model =
          mig::GpuCatalog::Default().Find(gpu.product);
      if (!model.ok() || *model != g.model) {
        return Status::InvalidArgument(fmt::format(
            "{}: GPU {} of node {} is a {}, the deployment places {} there",
            source, g.id.index, g.id.node, gpu.product, g.model->name));
      }
    }
    const mig::Layout layout = g.layout();
    for (const mig::Instance& instance : layout.instances()) {
      const std::string device =
          dra::MigDeviceName(*g.model, g.id.index, instance);
      if (gpu.mig_devices.count(device) > 0) continue;
      return Status::InvalidArgument(fmt::format(
          "{}: GPU {} of node {}: ResourceSlice {} offers no device {} for "
          "the deployment's {} at start {} ({} MIG device{} offered), so its "
          "claim could not be allocated; with DynamicMIG on, NVIDIA's DRA "
          "driver offers every profile at every start (docs/kubernetes.md, "
          "\"Claims that land on the plan\")",
          source, g.id.index, g.id.node, gpu.slice, device,
          g.model->profiles[instance.profile].name, instance.start,
          gpu.mig_devices.size(), gpu.mig_devices.size() == 1 ? "" : "s"));
    }
  }
  return Status::Ok();
}

}  // namespace migserve::kubernetes
