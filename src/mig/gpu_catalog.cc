#include "mig/gpu_catalog.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "mig/embedded_gpu_tables.h"
#include "util/yaml_map.h"

namespace migserve::mig {
namespace {

StatusOr<Profile> ParseProfile(const YAML::Node& node,
                               const std::string& source,
                               const std::string& path, int memory_slices) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(node, source, path));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"name", "nvml_id", "compute_slices", "memory_slices", "memory_gb",
       "starts", "max_count", "default", "aliases"}));
  Profile p;
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &p.name));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("nvml_id", &p.nvml_id));
  MIGSERVE_RETURN_IF_ERROR(map.Required("compute_slices", &p.compute_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_slices", &p.memory_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_gb", &p.memory_gb));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("starts", &p.starts));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("max_count", &p.max_count));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("default", &p.enabled_by_default));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("aliases", &p.aliases));
  if (p.compute_slices <= 0) return map.Error("compute_slices", "must be > 0");
  if (p.memory_slices <= 0) return map.Error("memory_slices", "must be > 0");
  if (p.starts.empty()) return map.Error("starts", "must list a start");
  for (int s : p.starts) {
    if (s < 0 || s + p.memory_slices > memory_slices) {
      return map.Error("starts", fmt::format("start {} does not fit", s));
    }
  }
  return p;
}

}  // namespace

StatusOr<GpuModel> ParseGpuModel(const std::string& yaml,
                                 const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, source));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(
      map.CheckKeys({"name", "pci_device_ids", "compute_slices",
                     "memory_slices", "memory_gb", "legacy_4g3g", "profiles"}));
  GpuModel model;
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &model.name));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("pci_device_ids", &model.pci_device_ids));
  MIGSERVE_RETURN_IF_ERROR(
      map.Required("compute_slices", &model.compute_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_slices", &model.memory_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_gb", &model.memory_gb));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("legacy_4g3g", &model.legacy_4g3g));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> profiles,
                            map.Sequence("profiles", true));
  for (size_t i = 0; i < profiles.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        Profile p,
        ParseProfile(profiles[i], source, fmt::format("profiles[{}]", i),
                     model.memory_slices));
    if (model.FindProfile(p.name) >= 0) {
      return map.Error("profiles", "duplicate profile " + p.name);
    }
    model.profiles.push_back(std::move(p));
  }
  return model;
}

const GpuCatalog& GpuCatalog::Default() {
  static const GpuCatalog* catalog = [] {
    std::vector<GpuModel> models;
    for (const EmbeddedGpuTable& table : kEmbeddedGpuTables) {
      auto model = ParseGpuModel(table.yaml, table.path);
      if (!model.ok()) {
        std::fprintf(stderr, "migserve: embedded GPU table broken: %s\n",
                     model.status().message().c_str());
        std::abort();
      }
      models.push_back(std::move(model).value());
    }
    return new GpuCatalog(std::move(models));
  }();
  return *catalog;
}

StatusOr<const GpuModel*> GpuCatalog::Find(std::string_view name) const {
  std::vector<std::string> names;
  for (const GpuModel& m : models_) {
    if (m.name == name) return &m;
    names.push_back(m.name);
  }
  return Status::NotFound(fmt::format("unknown GPU '{}' (known: {})", name,
                                      fmt::join(names, ", ")));
}

}  // namespace migserve::mig
