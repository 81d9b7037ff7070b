// A fleet's inventory: its GPU nodes by name, each with a GPU model and a
// number of GPUs (device indexes 0..gpus-1), read from YAML:
//   nodes:
//     - {name: gpu-a1, gpu: A100-SXM4-80GB, gpus: 8}
//     - {name: gpu-h1, gpu: H100-SXM5-80GB, gpus: 8}
#ifndef MIGSERVE_CLUSTER_INVENTORY_H_
#define MIGSERVE_CLUSTER_INVENTORY_H_

#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::cluster {

struct InventoryNode {
  std::string name;
  const mig::GpuModel* model = nullptr;
  int gpus = 0;
};

struct Inventory {
  std::string source;  // file it came from, for messages
  std::vector<InventoryNode> nodes;

  // Returns every GPU of the fleet, idle, in node order then index order.
  ClusterState IdleCluster() const;
};

// Parses an inventory; models are resolved in the default catalog. Returns
// InvalidArgument "source:line: nodes[2].gpu: reason" for a missing or
// mistyped field, an unknown model, a node listed twice or gpus < 1.
StatusOr<Inventory> ParseInventory(const std::string& yaml,
                                   const std::string& source);

// Reads and parses the inventory file `path`.
StatusOr<Inventory> LoadInventory(const std::string& path);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_INVENTORY_H_
