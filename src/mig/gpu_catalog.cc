#include "mig/gpu_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <tuple>
#include <utility>

#include "boundary/input_file.h"
#include "boundary/number.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "mig/embedded_gpu_tables.h"
#include "util/registry_freeze.h"

namespace migserve::mig {
namespace {

bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '+';
  });
}

// Parses a profile of `gpu`, whose slices and memory are read already.
StatusOr<Profile> ParseProfile(const YAML::Node& node,
                               const std::string& source,
                               const std::string& path, const GpuModel& gpu) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(node, source, path));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"name", "nvml_id", "compute_slices", "memory_slices", "memory_gb",
       "starts", "max_count", "default", "aliases", "sms"}));
  Profile p;
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &p.name));
  if (!IsProfileName(p.name)) {
    return map.Error("name",
                     fmt::format("must be a MIG profile name such as 1g.10gb "
                                 "or 1g.10gb+me (letters, digits, '.', '+'), "
                                 "got '{}'",
                                 Printable(p.name)));
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("nvml_id", &p.nvml_id));
  MIGSERVE_RETURN_IF_ERROR(map.Required("compute_slices", &p.compute_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_slices", &p.memory_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_gb", &p.memory_gb));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("starts", &p.starts));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("max_count", &p.max_count));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("default", &p.enabled_by_default));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("aliases", &p.aliases));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("sms", &p.sms));
  if (map.Has("sms") && (gpu.sms == 0 || p.sms < 1 || p.sms > gpu.sms)) {
    return map.Error("sms", gpu.sms == 0
                                ? "needs the GPU's own sms"
                                : fmt::format("must be from 1 to the GPU's {}, "
                                              "got {}",
                                              gpu.sms, p.sms));
  }
  for (auto [key, value, most] :
       {std::tuple{"compute_slices", p.compute_slices, gpu.compute_slices},
        std::tuple{"memory_slices", p.memory_slices, gpu.memory_slices}}) {
    if (value < 1 || value > most) {
      return map.Error(
          key,
          fmt::format("must be from 1 to the GPU's {}, got {}", most, value));
    }
  }
  if (!(p.memory_gb > 0 && p.memory_gb <= gpu.memory_gb)) {
    return map.Error("memory_gb",
                     fmt::format("must be above 0 and at most the GPU's {}, "
                                 "got {}",
                                 gpu.memory_gb, p.memory_gb));
  }
  if (p.starts.empty()) return map.Error("starts", "must list a start");
  for (int s : p.starts) {
    if (s < 0 || s + p.memory_slices > gpu.memory_slices) {
      return map.Error("starts", fmt::format("start {} does not fit", s));
    }
  }
  return p;
}

StatusOr<Product> ParseProduct(const YAML::Node& node,
                               const std::string& source,
                               const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(node, source, path));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"pci_device_id", "name"}));
  Product p;
  MIGSERVE_RETURN_IF_ERROR(map.Required("pci_device_id", &p.pci_device_id));
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &p.name));
  if (p.pci_device_id <= 0 || p.pci_device_id > 0xFFFF) {
    return map.Error("pci_device_id", "must be a 16-bit PCI device id");
  }
  return p;
}

}  // namespace

StatusOr<GpuModel> ParseGpuModel(const std::string& yaml,
                                 const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, source));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"name", "aliases", "pci_device_ids", "products", "compute_slices",
       "memory_slices", "memory_gb", "legacy_4g3g", "memory_bandwidth_gbs",
       "dense_bf16_tflops", "dense_fp8_tflops", "sms", "profiles"}));
  GpuModel model;
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &model.name));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("aliases", &model.aliases));
  // Workloads, profiles and plans name the GPU by these, and messages and
  // node configs print them.
  for (const std::string& name : model.aliases) {
    std::string problem = PlainNameProblem(name);
    if (!problem.empty()) return map.Error("aliases", problem);
  }
  std::string problem = PlainNameProblem(model.name);
  if (!problem.empty()) return map.Error("name", problem);
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("pci_device_ids", &model.pci_device_ids));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> products,
                            map.Sequence("products", false));
  for (size_t i = 0; i < products.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        Product p,
        ParseProduct(products[i], source, fmt::format("products[{}]", i)));
    if (!model.HasPciDeviceId(p.pci_device_id)) {
      model.pci_device_ids.push_back(p.pci_device_id);
    }
    model.products.push_back(std::move(p));
  }
  MIGSERVE_RETURN_IF_ERROR(
      map.Required("compute_slices", &model.compute_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_slices", &model.memory_slices));
  MIGSERVE_RETURN_IF_ERROR(map.Required("memory_gb", &model.memory_gb));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("legacy_4g3g", &model.legacy_4g3g));
  // What the LLM capacity model reads (docs/llm.md); absent: unknown.
  MIGSERVE_RETURN_IF_ERROR(map.Optional("memory_bandwidth_gbs",
                                        &model.memory_bandwidth_gbs, {1, 1e6}));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("dense_bf16_tflops", &model.dense_bf16_tflops, {1, 1e6}));
  MIGSERVE_RETURN_IF_ERROR(
      map.Optional("dense_fp8_tflops", &model.dense_fp8_tflops, {1, 1e6}));
  MIGSERVE_RETURN_IF_ERROR(map.Optional("sms", &model.sms));
  if (map.Has("sms") && (model.sms < 1 || model.sms > 100000)) {
    return map.Error(
        "sms", fmt::format("must be from 1 to 100000, got {}", model.sms));
  }
  for (auto [key, value] : {std::pair{"compute_slices", model.compute_slices},
                            std::pair{"memory_slices", model.memory_slices}}) {
    if (value < 1 || value > kMaxSlices) {
      return map.Error(
          key, fmt::format("must be from 1 to {}, got {}", kMaxSlices, value));
    }
  }
  std::string wrong = OutOfRange(model.memory_gb, kMemoryGbRange);
  if (!wrong.empty() || model.memory_gb <= 0) {
    return map.Error("memory_gb", wrong.empty() ? "must be above 0" : wrong);
  }
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> profiles,
                            map.Sequence("profiles", true));
  if (profiles.empty()) return map.Error("profiles", "must list a profile");
  for (size_t i = 0; i < profiles.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        Profile p, ParseProfile(profiles[i], source,
                                fmt::format("profiles[{}]", i), model));
    if (model.FindProfile(p.name) >= 0) {
      return map.Error("profiles", "duplicate profile " + p.name);
    }
    model.profiles.push_back(std::move(p));
  }
  if (model.profiles.size() > static_cast<size_t>(kMaxProfiles)) {
    return map.Error("profiles",
                     fmt::format("{} profiles; at most {} are supported",
                                 model.profiles.size(), kMaxProfiles));
  }
  return model;
}

StatusOr<GpuModel> LoadGpuModel(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseGpuModel(text, path);
}

namespace {

GpuCatalog& DefaultCatalog() {
  static GpuCatalog* catalog = [] {
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

}  // namespace

const GpuCatalog& GpuCatalog::Default() { return DefaultCatalog(); }

Status GpuCatalog::AddToDefault(GpuModel model) {
  if (FreezeRegistries::Frozen()) {
    return Status::FailedPrecondition(fmt::format(
        "GPU table {}: the GPU catalog is fixed while a command runs (give "
        "the table with --gpu-table)",
        model.name));
  }
  return DefaultCatalog().Add(std::move(model));
}

GpuCatalog::GpuCatalog(std::vector<GpuModel> models)
    : models_(std::make_move_iterator(models.begin()),
              std::make_move_iterator(models.end())) {}

Status GpuCatalog::Add(GpuModel model) {
  for (const GpuModel& m : models_) {
    if (m == model) return Status::Ok();
    std::vector<std::string> names = model.aliases;
    names.push_back(model.name);
    for (const std::string& name : names) {
      if (m.Named(name)) {
        return Status::InvalidArgument(
            fmt::format("GPU table {}: {} already names {}, whose table "
                        "differs (a table may repeat a known GPU's name only "
                        "with the same geometry)",
                        model.name, name, m.name));
      }
    }
  }
  models_.push_back(std::move(model));
  return Status::Ok();
}

std::vector<const GpuModel*> GpuCatalog::models() const {
  std::vector<const GpuModel*> out;
  for (const GpuModel& m : models_) out.push_back(&m);
  return out;
}

StatusOr<const GpuModel*> GpuCatalog::Find(std::string_view name) const {
  std::vector<std::string> names;
  for (const GpuModel& m : models_) {
    if (m.Named(name)) return &m;
    names.push_back(m.name);
  }
  return Status::NotFound(fmt::format("unknown GPU '{}' (known: {})", name,
                                      fmt::join(names, ", ")));
}

StatusOr<const GpuModel*> GpuCatalog::FindByPciDeviceId(
    unsigned int pci_device_id) const {
  for (auto m = models_.rbegin(); m != models_.rend(); ++m) {
    if (m->HasPciDeviceId(pci_device_id)) return &*m;
  }
  return Status::NotFound(fmt::format(
      "no GPU table lists PCI device id {:#06x} (add one with --gpu-table "
      "FILE, or name the model with --gpu)",
      pci_device_id > 0xFFFF ? pci_device_id >> 16 : pci_device_id));
}

}  // namespace migserve::mig
