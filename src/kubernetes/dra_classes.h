// The DeviceClasses of a DRA export (device-classes.yaml): one per MIG
// profile a deployment places, selecting NVIDIA's DRA driver's MIG devices
// of that profile and naming the device plugin's resource for it as its
// extendedResourceName (KEP-5004, DRAExtendedResource: alpha in Kubernetes
// 1.34 and 1.35, beta in 1.36). A pod that keeps its
// `nvidia.com/mig-<profile>` limit then gets a device of that profile from
// the driver on a node where no device plugin advertises the resource. The
// scheduler picks the device first-fit: such a pod gets the planned
// profile, while the claims of replicas.yaml, created by dra-apply.sh, get
// the planned placement (docs/kubernetes.md, "Claims that land on the
// plan").
#ifndef MIGSERVE_KUBERNETES_DRA_CLASSES_H_
#define MIGSERVE_KUBERNETES_DRA_CLASSES_H_

#include <string>

#include "cluster/cluster_state.h"
#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {

// The name of the DeviceClass of MIG `profile`: migserve-mig-<profile as a
// DNS label>.
std::string DeviceClassName(const mig::Profile& profile);

// The DeviceClasses of the profiles `state` places, in profile name order,
// as YAML with a header. A profile whose resource name is not a valid
// extended resource name (`1g.10gb+me`: '+') gets a class without one, and
// the header says so.
std::string DeviceClasses(const ClusterState& state);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_DRA_CLASSES_H_
