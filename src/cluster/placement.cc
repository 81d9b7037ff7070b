#include "cluster/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace migserve::cluster {

StatusOr<ClusterState> PlaceOnInventory(
    const deployment::Deployment& deployment, const Inventory& inventory) {
  ClusterState fleet = inventory.IdleCluster();
  // Where each GPU entry goes: pinned ones first, so that free GPUs are
  // known before the others take them.
  std::vector<std::optional<GpuId>> where(deployment.gpus.size());
  std::set<GpuId> taken;
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    const deployment::DeployedGpu& g = deployment.gpus[k];
    if (!g.node || !g.index) continue;
    GpuId id{*g.node, *g.index};
    const GpuState* target = fleet.FindGpu(id);
    std::string entry = fmt::format("{}: gpus[{}]", deployment.source, k);
    if (target == nullptr) {
      return Status::InvalidArgument(
          fmt::format("{}: GPU {} is not in the inventory {}", entry,
                      id.ToString(), inventory.source));
    }
    if (target->model->name != deployment.GpuModelOf(k)) {
      return Status::InvalidArgument(fmt::format(
          "{}: GPU {} is {} in the inventory, not {}", entry, id.ToString(),
          target->model->name, deployment.GpuModelOf(k)));
    }
    if (!taken.insert(id).second) {
      return Status::InvalidArgument(
          fmt::format("{}: GPU {} is listed twice", entry, id.ToString()));
    }
    where[k] = id;
  }
  std::map<std::string, int> had;
  for (const GpuState& g : fleet.gpus) ++had[g.model->name];
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    const deployment::DeployedGpu& g = deployment.gpus[k];
    if (where[k] || g.instances.empty()) continue;
    const std::string& model = deployment.GpuModelOf(k);
    // Nodes in inventory order (the fleet's own order, not their names'),
    // so that configs fill the first nodes listed.
    for (const InventoryNode& node : inventory.nodes) {
      if (node.model->name != model || (g.node && node.name != *g.node)) {
        continue;
      }
      for (int i = 0; i < node.gpus && !where[k]; ++i) {
        GpuId free{node.name, i};
        if (taken.insert(free).second) where[k] = free;
      }
      if (where[k]) break;
    }
    if (!where[k] && g.node) {
      return Status::InvalidArgument(fmt::format(
          "{}: gpus[{}]: node {} has no free {} GPU in the inventory {}",
          deployment.source, k, *g.node, model, inventory.source));
    }
  }
  // The first model short of GPUs, with every GPU the deployment needs of it.
  std::map<std::string, int> needed;
  std::optional<std::string> short_model;
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    if (deployment.gpus[k].instances.empty() && !where[k]) continue;
    ++needed[deployment.GpuModelOf(k)];
    if (!where[k] && !short_model) short_model = deployment.GpuModelOf(k);
  }
  if (short_model) {
    return Status::InvalidArgument(fmt::format(
        "{}: the deployment needs {} {} GPUs but the inventory {} has {}",
        deployment.source, needed[*short_model], *short_model, inventory.source,
        had[*short_model]));
  }
  // Build the placed deployment and read it back as a cluster: the same
  // checks (profiles of the GPU's model, legal layouts) as any input.
  deployment::Deployment placed = deployment;
  placed.gpus.clear();
  for (size_t k = 0; k < deployment.gpus.size(); ++k) {
    if (!where[k]) continue;
    deployment::DeployedGpu g = deployment.gpus[k];
    g.node = where[k]->node;
    g.index = where[k]->index;
    g.gpu = deployment.GpuModelOf(k);
    placed.gpus.push_back(std::move(g));
  }
  MIGSERVE_ASSIGN_OR_RETURN(ClusterState state,
                            ClusterFromDeployment(placed, {}));
  for (const GpuState& idle : fleet.gpus) {
    if (taken.count(idle.id) == 0) state.gpus.push_back(idle);
  }
  state.Sort();
  return state;
}

StatusOr<deployment::Deployment> PlacedDeployment(
    const deployment::Deployment& deployment, const Inventory& inventory) {
  MIGSERVE_ASSIGN_OR_RETURN(ClusterState state,
                            PlaceOnInventory(deployment, inventory));
  deployment::Deployment placed = ToDeployment(state, deployment.services);
  placed.gpu = deployment.gpu;
  placed.summary = deployment.summary;
  return placed;
}

}  // namespace migserve::cluster
