#include "kubernetes/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "boundary/json_fields.h"
#include "boundary/plain_name.h"
#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {

std::string ReplicaName(const std::string& service, const std::string& node,
                        int index, const mig::Profile& profile, int start) {
  return DnsLabel(fmt::format("{}-{}-g{}-{}-{}", service, node, index,
                              profile.name, start));
}

namespace {

// `name` as a DNS-1035 label: a Service's name must start with a letter.
std::string ServiceLabel(const std::string& name) {
  std::string label = DnsLabel(name);
  if (!std::isalpha(static_cast<unsigned char>(label.front()))) {
    label = DnsLabel("g-" + label);
  }
  return label;
}

}  // namespace

std::string GroupName(const std::string& service, const RouteGroup& group) {
  const auto& [gpu_model, profile, batch, procs, credit] = KeyOf(group);
  return ServiceLabel(fmt::format("{}-{}-b{}-p{}-c{}-{}", service, profile,
                                  batch, procs, credit, gpu_model));
}

std::string SlotName(const std::string& service, const RouteGroup& group) {
  return ServiceLabel(fmt::format("{}-{}-b{}-p{}-{}", service, group.profile,
                                  group.batch, group.procs, group.gpu_model));
}

namespace {

// `name` with '+', which neither a label value nor a resource name holds,
// as '.', as NVIDIA's device plugin writes it.
std::string WithoutPlus(std::string name) {
  std::replace(name.begin(), name.end(), '+', '.');
  return name;
}

}  // namespace

std::string MigResourceName(const mig::Profile& profile) {
  return "nvidia.com/mig-" + WithoutPlus(profile.name);
}

std::string RouteName(const std::string& service) { return DnsLabel(service); }

kube::Labels ManagedLabels() {
  kube::Labels labels;
  labels.Set(kManagedBy, kube::LabelValue::Parse(kManager).value());
  return labels;
}

StatusOr<kube::LabelValue> NodeLabel(const GpuId& gpu) {
  return kube::ParseLabelValue(gpu.node,
                               fmt::format("node of GPU {}", gpu.ToString()));
}

StatusOr<kube::LabelValue> NumberLabel(int n) {
  return kube::LabelValue::Parse(std::to_string(n));
}

StatusOr<kube::LabelValue> ProfileLabel(const mig::Profile& profile) {
  return kube::ParseLabelValue(WithoutPlus(profile.name),
                               "profile " + profile.name);
}

int ProfileOfLabel(const mig::GpuModel& model, std::string_view label) {
  int found = model.FindProfile(label);
  for (size_t p = 0; found < 0 && p < model.profiles.size(); ++p) {
    if (WithoutPlus(model.profiles[p].name) == label)
      found = static_cast<int>(p);
  }
  return found;
}

Status CheckLabelValue(std::string_view value, std::string_view what) {
  if (IsPlainName(value)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{} \"{}\" is not a Kubernetes label value (at most 63 letters, digits, "
      "'-', '_' or '.', starting and ending with a letter or digit)",
      what, value));
}

namespace {

// Entry `key` of the metadata's map `map` of `object`, or "".
std::string MetadataEntry(const nlohmann::json& object, const char* map,
                          const std::string& key) {
  auto meta = object.is_object() ? object.find("metadata") : object.end();
  if (meta == object.end()) return "";
  return StringField(*meta, map, key.c_str()).value_or("");
}

}  // namespace

std::string Annotation(const nlohmann::json& object, const std::string& key) {
  return MetadataEntry(object, "annotations", key);
}

std::string Label(const nlohmann::json& object, const std::string& key) {
  return MetadataEntry(object, "labels", key);
}

StatusOr<long> EpochOf(const nlohmann::json& object) {
  std::string text = Annotation(object, kAnnotationEpoch);
  if (text.empty()) return 0;
  char* end = nullptr;
  long epoch = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || epoch < 0) {
    return Status::InvalidArgument(fmt::format(
        "annotation {}: '{}' is not an epoch", kAnnotationEpoch, text));
  }
  return epoch;
}

}  // namespace migserve::kubernetes
