// Who partitions a node's GPUs, read from NVIDIA's DRA driver's
// ResourceSlices (docs/kubernetes.md, "Choosing who partitions the GPUs").
// Under its DynamicMIG feature gate the driver announces every (profile,
// placement) of a GPU as a device that consumes the GPU's shared counters
// (KEP-4815), creates an instance when a claim is prepared and destroys the
// instances it did not create; the node agent and the GPU Operator's MIG
// manager likewise make the layout they are given. Two of them on one GPU
// undo each other's work, so the agent refuses such a node and `migserve
// doctor` names it. Reads only.
#ifndef MIGSERVE_KUBERNETES_PARTITION_DRA_CHECK_H_
#define MIGSERVE_KUBERNETES_PARTITION_DRA_CHECK_H_

#include <map>
#include <string>
#include <vector>

#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/finding.h"
#include "kubernetes/partition/partitioner.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

// What NVIDIA's DRA driver publishes, by node.
struct DraNodes {
  bool api = false;  // the cluster serves resource.k8s.io/v1 ResourceSlices
  // Nodes with a slice of the driver (gpu.nvidia.com), and the name of one.
  std::map<std::string, std::string> driver;
  // Nodes whose GPUs the driver partitions (DynamicMIG), and the name of a
  // slice that announces a partitionable MIG device.
  std::map<std::string, std::string> dynamic;
};

// Reads the driver's ResourceSlices (of `node` only, if not empty). A
// cluster without resource.k8s.io/v1 (before Kubernetes 1.34) gives
// api == false; any other failure (403 included) is returned.
StatusOr<DraNodes> ReadDraNodes(kube::KubeClient* client,
                                const std::string& node = "");

// Ok unless the DRA driver partitions `node`'s GPUs dynamically:
// FailedPrecondition naming the slice, for the node agent to refuse.
Status CheckAgentMayPartition(kube::KubeClient* client,
                              const std::string& node);

// The preflight for `partitioner`: for the agent and the MIG manager, each
// node the DRA driver partitions dynamically is a problem; for DRA, the
// API, the driver's slices, its partitionable MIG devices (DynamicMIG, and
// before Kubernetes 1.36 the DRAPartitionableDevices gate) and its
// mig.nvidia.com DeviceClass must be there. Returns an error only if the
// slices cannot be read.
StatusOr<std::vector<Finding>> CheckDra(kube::KubeClient* client,
                                        Partitioner partitioner);

// With a deployment to place (`doctor -d` under DRA): whether the
// driver's slices offer, on each GPU the deployment serves on, a device for
// every instance of its layout (CheckSlicesCover): one finding either way.
// Returns an error only if the slices cannot be read.
StatusOr<Finding> CheckDraOffers(kube::KubeClient* client,
                                 const ClusterState& state);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_DRA_CHECK_H_
