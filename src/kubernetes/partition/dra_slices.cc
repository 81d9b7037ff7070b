#include "kubernetes/partition/dra_slices.h"

#include <fmt/format.h>

#include <string_view>

#include "boundary/json_fields.h"
#include "boundary/plain_name.h"
#include "dra/nvidia_devices.h"
#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {
namespace {

// Whether `name` is the driver's name of a whole GPU, gpu-<minor>; sets
// `minor`.
bool ParseGpuDevice(const std::string& name, int* minor) {
  constexpr std::string_view kPrefix = "gpu-";
  if (name.size() <= kPrefix.size() || name.size() > kPrefix.size() + 4 ||
      name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return false;
  }
  int value = 0;
  for (size_t i = kPrefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    value = value * 10 + (name[i] - '0');
  }
  *minor = value;
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
      if (!ParseGpuDevice(device_name, &minor)) continue;
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
      gpus[{node, minor}] = {*uuid,
                             Attribute(device, "productName").value_or("")};
    }
  }
  return gpus;
}

}  // namespace migserve::kubernetes
