#include "cluster/inventory.h"

#include <fmt/format.h>

#include <set>

#include "boundary/input_file.h"
#include "boundary/number.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "mig/gpu_catalog.h"

namespace migserve::cluster {

ClusterState Inventory::IdleCluster() const {
  ClusterState state;
  for (const InventoryNode& node : nodes) {
    for (int i = 0; i < node.gpus; ++i) {
      state.gpus.push_back({{node.name, i}, node.model, {}});
    }
  }
  state.Sort();
  return state;
}

StatusOr<Inventory> ParseInventory(const std::string& yaml,
                                   const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, source));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"nodes"}));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> nodes,
                            map.Sequence("nodes", true));
  Inventory inventory;
  inventory.source = source;
  std::set<std::string> names;
  int total = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    MIGSERVE_ASSIGN_OR_RETURN(
        YamlMap node,
        YamlMap::Open(nodes[k], source, fmt::format("nodes[{}]", k)));
    MIGSERVE_RETURN_IF_ERROR(node.CheckKeys({"name", "gpu", "gpus"}));
    InventoryNode out;
    std::string gpu;
    MIGSERVE_RETURN_IF_ERROR(node.Required("name", &out.name));
    MIGSERVE_RETURN_IF_ERROR(node.Required("gpu", &gpu));
    MIGSERVE_RETURN_IF_ERROR(node.Required("gpus", &out.gpus));
    std::string problem = ObjectNameProblem(out.name);
    if (!problem.empty()) return node.Error("name", problem);
    if (!names.insert(out.name).second) {
      return node.Error("name", out.name + " is listed twice");
    }
    auto model = mig::GpuCatalog::Default().Find(gpu);
    if (!model.ok()) return node.Error("gpu", model.status().message());
    out.model = *model;
    if (out.gpus < 1 || out.gpus > kMaxGpusPerNode) {
      return node.Error("gpus", fmt::format("must be from 1 to {}, got {}",
                                            kMaxGpusPerNode, out.gpus));
    }
    total += out.gpus;
    if (total > kMaxGpus) {
      return node.Error(
          "gpus", fmt::format("brings the inventory past {} GPUs", kMaxGpus));
    }
    inventory.nodes.push_back(std::move(out));
  }
  return inventory;
}

StatusOr<Inventory> LoadInventory(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseInventory(text, path);
}

}  // namespace migserve::cluster
