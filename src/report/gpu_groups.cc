#include "report/gpu_groups.h"

#include <fmt/format.h>

#include <map>

#include "mig/gpu_catalog.h"

namespace migserve::report {
namespace {

std::string Key(const GpuGroup& g) {
  std::string key = g.model;
  for (const deployment::PlacedInstance& i : g.gpu->instances) {
    key += fmt::format("|{}@{}:{}:{}:{}", i.profile, i.start,
                       i.service.value_or(""), i.batch, i.procs);
  }
  return key;
}

}  // namespace

std::vector<NodeGroups> GroupGpus(const deployment::Deployment& deployment,
                                  int collapse_above) {
  bool collapse = static_cast<int>(deployment.gpus.size()) > collapse_above;
  std::map<std::string, NodeGroups> nodes;
  std::map<std::string, std::map<std::string, size_t>> group_of;  // by key
  for (size_t g = 0; g < deployment.gpus.size(); ++g) {
    const deployment::DeployedGpu& gpu = deployment.gpus[g];
    NodeGroups& node = nodes[gpu.node.value_or("")];
    node.node = gpu.node.value_or("");
    GpuGroup group{&gpu, deployment.GpuModelOf(g), 1};
    ++node.total;
    node.serving += gpu.Serving() ? 1 : 0;
    if (collapse) {
      auto [it, added] =
          group_of[node.node].emplace(Key(group), node.gpus.size());
      if (!added) {
        ++node.gpus[it->second].count;
        continue;
      }
    }
    node.gpus.push_back(group);
  }
  std::vector<NodeGroups> out;
  for (auto& [name, node] : nodes) out.push_back(std::move(node));
  return out;
}

int MemorySlices(const std::string& model) {
  auto gpu = mig::GpuCatalog::Default().Find(model);
  return gpu.ok() ? (*gpu)->memory_slices : 8;
}

int MemorySlices(const std::string& model, const std::string& profile) {
  auto gpu = mig::GpuCatalog::Default().Find(model);
  if (!gpu.ok()) return 1;
  int p = (*gpu)->FindProfile(profile);
  return p < 0 ? 1 : (*gpu)->profiles[p].memory_slices;
}

std::string GpuName(const deployment::DeployedGpu& gpu) {
  if (gpu.node && gpu.index) return fmt::format("{}/{}", *gpu.node, *gpu.index);
  return gpu.index ? fmt::format("GPU {}", *gpu.index)
                   : fmt::format("gpu {}", gpu.id);
}

std::string GpuLabel(const GpuGroup& group, NodeInLabel node) {
  const deployment::DeployedGpu& g = *group.gpu;
  std::string label = node == NodeInLabel::kNamed || !g.index
                          ? GpuName(g)
                          : fmt::format("GPU {}", *g.index);
  if (group.count > 1) label += fmt::format(" \u00d7 {}", group.count);
  return label;
}

}  // namespace migserve::report
