#include "kubernetes/mig_configs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "boundary/plain_name.h"
#include "kube/yaml_writer.h"

namespace migserve::kubernetes {
namespace {

// A mig-parted document, keys in the order written.
using Yaml = nlohmann::ordered_json;

// Per node, its mig-parted entries: one `devices: [<index>]` entry per GPU
// that holds instances.
std::map<std::string, Yaml> NodeEntries(const ClusterState& state) {
  std::map<std::string, Yaml> nodes;
  for (const GpuState& g : state.gpus) {
    if (g.slots.empty()) continue;  // idle: left as it is
    Yaml devices = Yaml::object();
    for (const Slot& s : g.slots) {
      const std::string& name = g.model->profiles[s.instance.profile].name;
      devices[name] = devices.value(name, 0) + 1;
    }
    Yaml entry = {{"devices", Yaml::array({g.id.index})},
                  {"mig-enabled", true},
                  {"mig-devices", devices}};
    auto [it, added] = nodes.try_emplace(g.id.node, Yaml::array());
    it->second.push_back(std::move(entry));
  }
  return nodes;
}

// The MIG manager's name of a node's layout: shared by every node that has
// it.
std::string MigManagerConfigName(const Yaml& entries) {
  return "migserve-" + ShortHash(entries.dump());
}

}  // namespace

std::string GpuModelNames(const ClusterState& state) {
  std::set<std::string> names;
  for (const GpuState& g : state.gpus) names.insert(g.model->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::map<std::string, std::string> MigManagerConfigOfNodes(
    const ClusterState& state) {
  std::map<std::string, std::string> out;
  for (const auto& [node, entries] : NodeEntries(state)) {
    out[node] = MigManagerConfigName(entries);
  }
  return out;
}

std::string MigPartedConfig(const ClusterState& state) {
  Yaml configs = Yaml::object();
  for (auto& [node, entries] : NodeEntries(state)) {
    configs[node] = std::move(entries);
  }
  std::string header = fmt::format(
      "# mig-parted v1 config written by migserve export ({}): one config\n"
      "# per node, applied by NVIDIA's MIG manager when the node's label\n"
      "# nvidia.com/mig.config names it. mig-parted re-creates every GPU\n"
      "# whose layout differs, so those GPUs must be idle; the migserve agent\n"
      "# changes only the instances that differ.\n",
      GpuModelNames(state));
  return header + kube::ToYaml({{{"version", "v1"}, {"mig-configs", configs}}});
}

std::string MigManagerConfigMap(const ClusterState& state) {
  // The Operator's own defaults, kept for the nodes that still use them.
  Yaml configs = {
      {"all-disabled", {{{"devices", "all"}, {"mig-enabled", false}}}},
      {"all-enabled",
       {{{"devices", "all"},
         {"mig-enabled", true},
         {"mig-devices", Yaml::object()}}}}};
  std::map<std::string, std::vector<std::string>> nodes_of;  // by config
  for (auto& [node, entries] : NodeEntries(state)) {
    std::string name = MigManagerConfigName(entries);
    nodes_of[name].push_back(node);
    if (!configs.contains(name)) configs[name] = std::move(entries);
  }
  std::string config = fmt::format(
      "# mig-parted v1 config written by migserve export ({}): the GPU\n"
      "# Operator's defaults and one config per distinct node layout,\n"
      "# shared by the nodes that have it.\n",
      GpuModelNames(state));
  config += kube::ToYaml({{{"version", "v1"}, {"mig-configs", configs}}});
  Yaml map = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       {{"name", kMigManagerConfigMap}, {"namespace", kGpuOperatorNamespace}}},
      {"data", {{"config.yaml", config}}}};
  std::string labels;
  for (const auto& [name, nodes] : nodes_of) {
    labels += fmt::format(
        "#   kubectl label node {} nvidia.com/mig.config={} --overwrite\n",
        fmt::join(nodes, " "), name);
  }
  std::string header = fmt::format(
      "# The GPU Operator's MIG manager config written by migserve export\n"
      "# ({}): a config for each of its {} distinct node layouts, beside the\n"
      "# Operator's all-disabled and all-enabled. Apply it, point the\n"
      "# ClusterPolicy's spec.migManager.config.name at {} and label the\n"
      "# nodes:\n{}"
      "# The MIG manager re-creates every GPU whose layout differs, so those\n"
      "# GPUs must be idle (docs/kubernetes.md, \"The GPU Operator\").\n",
      GpuModelNames(state), nodes_of.size(), kMigManagerConfigMap, labels);
  return header + kube::ToYaml(std::vector<Yaml>{map});
}

}  // namespace migserve::kubernetes
