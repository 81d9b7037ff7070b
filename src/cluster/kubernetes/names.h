// How migserve names and labels what it puts on Kubernetes: the label keys
// that identify a replica (service, node, GPU, placement), object names
// that Kubernetes accepts, and a GPU's device index on its node.
#ifndef MIGSERVE_CLUSTER_KUBERNETES_NAMES_H_
#define MIGSERVE_CLUSTER_KUBERNETES_NAMES_H_

#include <map>
#include <string>
#include <string_view>

#include "cluster/cluster_state.h"
#include "util/status.h"

namespace migserve::cluster::kubernetes {

inline constexpr char kManagedBy[] = "app.kubernetes.io/managed-by";
inline constexpr char kManager[] = "migserve";
inline constexpr char kLabelService[] = "migserve.io/service";
inline constexpr char kLabelNode[] = "migserve.io/node";
inline constexpr char kLabelProfile[] = "migserve.io/profile";
inline constexpr char kLabelGpu[] = "migserve.io/gpu";
inline constexpr char kLabelStart[] = "migserve.io/start";
// Annotations: where the replicas of a group sit ("<gpu>:<start>,..."), and
// the batch and MPS processes they run.
inline constexpr char kAnnotationPlacements[] = "migserve.io/placements";
inline constexpr char kAnnotationBatch[] = "migserve.io/batch";
inline constexpr char kAnnotationProcs[] = "migserve.io/procs";
// The DRA driver's name of the exact MIG device a claim is for.
inline constexpr char kAnnotationDevice[] = "migserve.io/device";
// Node annotation the agent writes: the node's GPUs and their layouts.
inline constexpr char kAnnotationLayouts[] = "migserve.io/mig-layouts";

// Returns `text` as a DNS-1123 label (lowercase alphanumerics and '-', at
// most 63 characters; longer names keep a hash of the whole).
std::string DnsLabel(std::string_view text);

// Returns InvalidArgument naming `what` unless `value` is a valid label
// value (at most 63 of [A-Za-z0-9_.-], alphanumeric at both ends).
Status CheckLabelValue(std::string_view value, std::string_view what);

// Returns each GPU id's device index on its node: its rank by id among the
// node's GPUs (nvidia-smi's index on a node whose GPUs are listed in order).
std::map<int, int> DeviceIndexes(const ClusterState& state);

}  // namespace migserve::cluster::kubernetes

#endif  // MIGSERVE_CLUSTER_KUBERNETES_NAMES_H_
