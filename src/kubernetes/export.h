// migserve export (DESIGN 4): a placed deployment as what NVIDIA's stack on
// Kubernetes applies. mig-parted.yaml is a mig-parted v1 config with one
// named config per node (the MIG manager applies it when the node's label
// nvidia.com/mig.config names it); replicas.yaml holds the Kubernetes
// objects that run the replicas, in one of two flavours:
//  - device-plugin: per (service, node, profile) a Deployment whose pods
//    request one nvidia.com/mig-<profile> (mixed strategy), pinned to the
//    node, labelled with service, node and profile, and annotated with the
//    GPUs and starts of its replicas;
//  - dra: per replica a ResourceClaim for NVIDIA's DRA driver (device class
//    mig.nvidia.com) that selects the profile on the exact GPU, and a
//    one-replica Deployment that uses it.
// Pods follow the serving spec's template with the replica contract
// (replica_pod.h). routing.yaml, written when the spec names a gateway,
// holds the routing objects (routing_objects.h): a Service per routing
// group and an HTTPRoute per service weighted by capacity.
#ifndef MIGSERVE_KUBERNETES_EXPORT_H_
#define MIGSERVE_KUBERNETES_EXPORT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_state.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/mig_configs.h"
#include "kubernetes/partition/partitioner.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/proxy_objects.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::kubernetes {

struct ExportOptions {
  // Who partitions the GPUs: the objects written for it (export's
  // --flavor). kGpuOperator: the device-plugin objects, and the MIG layouts
  // as the GPU Operator's MIG manager reads them (a ConfigMap) instead of a
  // bare mig-parted file.
  Partitioner partitioner = Partitioner::kAgent;
  ServingSpec serving;
  std::optional<ProxyExport> proxy;  // set: write proxy.yaml
  // The services that asked for redundancy (their min_replicas, above 1):
  // a node drain may take one of their replicas at a time, no more (a
  // PodDisruptionBudget each in replicas.yaml).
  std::map<std::string, int> min_replicas = {};
  // kDra: the UUID of each GPU, by node and device index (the driver's
  // `gpu-<minor>` devices, GpuUuidsOfSlices), so that each claim pins its
  // GPU; empty: claims pin the profile only and the node's order decides.
  std::map<std::pair<std::string, int>, std::string> gpu_uuids = {};
  // Set: write target.yaml, the ServingTarget `name` (in the serving
  // namespace) whose spec is `deployment` (its JSON), for the controller
  // to follow (controller --target-resource).
  struct Target {
    std::string name;
    nlohmann::json deployment;
  };
  std::optional<Target> target = {};
};

struct ExportedFiles {
  std::string mig_parted;      // mig-parted.yaml; empty for kGpuOperator
  std::string mig_manager;     // mig-manager.yaml; kGpuOperator only
  std::string replicas;        // replicas.yaml
  std::string routing;         // routing.yaml; empty if the spec has no gateway
  std::string proxy;           // proxy.yaml; empty without options.proxy
  std::string dra_apply;       // dra-apply.sh; kDra only
  std::string device_classes;  // device-classes.yaml; kDra only
  std::string target;          // target.yaml; with ExportOptions::target
};

// The GPUs' UUIDs in `json`, a ResourceSliceList (`kubectl get
// resourceslices -o json`): every `gpu-<minor>` device of NVIDIA's driver
// (gpu.nvidia.com), by node and minor. InvalidArgument naming `source` and
// the slice if a UUID is missing, not a plain name or another GPU's; and,
// with `state` (the deployment to pin), naming the GPU where one that
// serves is in no slice or is another product than the deployment says.
StatusOr<std::map<std::pair<std::string, int>, std::string>> GpuUuidsOfSlices(
    const std::string& json, const std::string& source,
    const ClusterState* state = nullptr);

// The DNN model of each service with a replica in `state`, by service.
std::map<std::string, std::string> ModelsOf(const ClusterState& state);

// Returns the Kubernetes objects of the replicas of `state`; each replica
// runs its own DNN model (Replica::model, which ClusterFromDeployment takes
// from the deployment's services), else its service's name. Under kDra,
// `dra_apply` (if not null) gets the script that creates their claims in
// order (dra-apply.sh); `owners` (if not null) which Deployment runs each
// replica (what the proxy's routes name). Returns InvalidArgument if a
// service or node name cannot be a label value, or a GPU has no UUID in
// options.gpu_uuids.
StatusOr<std::string> ReplicaObjects(const ClusterState& state,
                                     const ExportOptions& options,
                                     std::string* dra_apply = nullptr,
                                     ReplicaOwners* owners = nullptr);

// The routing objects of `state`'s services. Returns InvalidArgument if the
// spec has no gateway or its path match cannot tell two services apart.
StatusOr<std::string> RoutingObjects(const ClusterState& state,
                                     const ServingSpec& spec);

// All the files.
StatusOr<ExportedFiles> Export(const ClusterState& state,
                               const ExportOptions& options);

// What WriteExport changed, by path.
struct WrittenExport {
  std::vector<std::string> written;
  std::vector<std::string> removed;  // files of an earlier export
};

// Writes `files` into the directory `dir` (created if missing), all or
// none: a failed write leaves the previous export whole. A file this export
// does not produce (a routing.yaml would route to other replicas) is
// removed once the new ones are in place. Returns InvalidArgument if the
// directory cannot be created, and the write's error.
StatusOr<WrittenExport> WriteExport(const ExportedFiles& files,
                                    const std::string& dir);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_EXPORT_H_
