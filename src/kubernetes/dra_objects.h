// The objects that claim one MIG device from NVIDIA's DRA driver, shared by
// `export --flavor dra` (replicas.yaml) and the controller's DRA partition
// driver (partition/dra_driver.h): a ResourceClaim pinned to the device's
// profile and GPU, and the pod that only holds a claim so that the
// scheduler allocates it (the allocator acts for pods alone); and the
// reader of what the scheduler allocated a claim.
#ifndef MIGSERVE_KUBERNETES_DRA_OBJECTS_H_
#define MIGSERVE_KUBERNETES_DRA_OBJECTS_H_

#include <string>

#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/serving_spec.h"
#include "mig/gpu_model.h"

namespace migserve::kubernetes {

// The CEL selector of a claim for `profile`, on the GPU with `uuid` if one
// is known.
std::string DraSelector(const mig::Profile& profile, const std::string& uuid);

// A ResourceClaim named `name` for one MIG device that `selector` selects,
// annotated with the `device` first-fit is planned to give it, in `spec`'s
// namespace.
nlohmann::ordered_json DraClaim(const std::string& name,
                                const kube::Labels& labels,
                                const std::string& device,
                                const std::string& selector,
                                const ServingSpec& spec);

// A holding claim's pod: it only holds claim `name` (pause, as nobody, Pod
// Security "restricted"), on `node`.
nlohmann::ordered_json HoldPod(const std::string& name,
                               const kube::Labels& labels,
                               const std::string& device,
                               const std::string& node,
                               const ServingSpec& spec);

// A claim's allocation results as the scheduler writes them
// (status.allocation.devices.results), or null while it has none (or the
// object is not one).
const nlohmann::json* AllocationResults(const nlohmann::json& claim);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_DRA_OBJECTS_H_
