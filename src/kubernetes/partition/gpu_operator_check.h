// What will not work on a GPU Operator cluster (`migserve doctor`,
// docs/kubernetes.md, "Install on a GPU Operator cluster"), read from the
// nodes, the ClusterPolicy and the MIG manager's DaemonSet: the `single`
// MIG strategy (replicas request nvidia.com/mig-<profile>, which only the
// `mixed` strategy advertises), a MIG manager that is disabled or absent, a
// MIG-capable node without the nvidia.com/mig.config label or whose last
// change failed, and, given the deployment's layouts, a node whose label
// names another config than the one export wrote for it. Reads only.
#ifndef MIGSERVE_KUBERNETES_PARTITION_GPU_OPERATOR_CHECK_H_
#define MIGSERVE_KUBERNETES_PARTITION_GPU_OPERATOR_CHECK_H_

#include <map>
#include <string>
#include <vector>

#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/finding.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

// Runs the checks; `configs` maps each node to the config export wrote for
// it (MigManagerConfigOfNodes; empty: not checked). Returns an error only
// if the nodes cannot be read.
StatusOr<std::vector<Finding>> CheckGpuOperator(
    kube::KubeClient* client,
    const std::map<std::string, std::string>& configs);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_GPU_OPERATOR_CHECK_H_
