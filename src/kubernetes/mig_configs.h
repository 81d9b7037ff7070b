// The MIG layouts of a deployment as NVIDIA's tools read them (what
// `export` writes besides the replicas): a mig-parted v1 config per node,
// or the GPU Operator's MIG manager ConfigMap with one config per distinct
// node layout and the labels that name it.
#ifndef MIGSERVE_KUBERNETES_MIG_CONFIGS_H_
#define MIGSERVE_KUBERNETES_MIG_CONFIGS_H_

#include <map>
#include <string>

#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {

// The ConfigMap the GPU Operator's MIG manager reads when its ClusterPolicy
// names it (spec.migManager.config.name), in the Operator's namespace.
inline constexpr char kMigManagerConfigMap[] = "custom-mig-config";
inline constexpr char kGpuOperatorNamespace[] = "gpu-operator";

// Returns the mig-parted v1 config of `state`: per node a config named
// after the node with one `devices: [<index>]` entry per GPU that has
// instances, each with the profiles of its own GPU model. A GPU without
// instances is left out, so that applying the config leaves it as it is
// (`mig-devices: {}` would clear whatever runs there); a node without such
// a GPU has no config.
std::string MigPartedConfig(const ClusterState& state);

// The config the MIG manager ConfigMap (MigManagerConfigMap) gives each node
// that has instances (the value of its nvidia.com/mig.config label), by node.
std::map<std::string, std::string> MigManagerConfigOfNodes(
    const ClusterState& state);

// The config as the GPU Operator's MIG manager reads it (ConfigMap
// kMigManagerConfigMap in kGpuOperatorNamespace, key config.yaml), by the
// Operator's conventions: one config per distinct node layout, named
// "migserve-<hash of the layout>" and shared by the nodes that have it,
// beside the Operator's defaults all-disabled and all-enabled (a node
// still labelled with one keeps working once the ClusterPolicy names this
// map). The header says which nodes to label with which config.
std::string MigManagerConfigMap(const ClusterState& state);

// The GPU models of `state`: "A100-SXM4-80GB" or "A100-SXM4-80GB,
// H100-SXM5-80GB", for the headers of what export writes.
std::string GpuModelNames(const ClusterState& state);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_MIG_CONFIGS_H_
