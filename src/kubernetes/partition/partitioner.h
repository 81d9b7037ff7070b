// Who partitions a cluster's GPUs into MIG instances: one concept, named
// once (controller-runtime's Scheme in miniature), with the facets that
// export, the preflight (`doctor`), `observe` and the controller need.
//   agent         migserve's node agent through NVML, NVIDIA's device plugin
//                 exposing the instances (export's --flavor device-plugin)
//   gpu-operator  the GPU Operator's MIG manager (mig-parted) from a
//                 ConfigMap; whole GPUs at a time, drained: export and
//                 doctor only, the controller cannot act through it
//   dra           NVIDIA's DRA driver (DynamicMIG) through ResourceClaims
// A new partitioner is one more row of the table in partitioner.cc, a
// PartitionDriver where the controller can act through it, and its
// preflight in doctor.
#ifndef MIGSERVE_KUBERNETES_PARTITION_PARTITIONER_H_
#define MIGSERVE_KUBERNETES_PARTITION_PARTITIONER_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

enum class Partitioner { kAgent, kGpuOperator, kDra };

struct PartitionerFacets {
  Partitioner kind;
  // Its name for --partitioner (controller, doctor, observe).
  std::string_view name;
  // Its name for export's --flavor (the objects export writes for it).
  std::string_view flavor;
  // The controller can move a cluster through it (it has a driver).
  bool drives;
  std::string_view what;  // one line, for --help
};

// Every partitioner, in the order above.
const std::vector<PartitionerFacets>& Partitioners();
const PartitionerFacets& FacetsOf(Partitioner partitioner);

// (name, partitioner) by name, for --partitioner (those that drive only,
// if `driving`) and for export's --flavor.
std::vector<std::pair<std::string, Partitioner>> PartitionerNames(bool driving);
std::vector<std::pair<std::string, Partitioner>> FlavorNames();

// What a driver is made with.
struct DriverOptions {
  std::string namespace_ = "default";  // of the replicas (DRA's claims)
  int watch_s = 300;                   // seconds a watch lasts
  LogSink progress;                    // may be empty
  EventSink event;                     // may be empty
};

// The driver the controller acts through for `partitioner`;
// FailedPrecondition, saying why, for one it cannot act through. `client`
// is not owned and outlives the driver.
StatusOr<std::unique_ptr<PartitionDriver>> MakePartitionDriver(
    Partitioner partitioner, kube::KubeClient* client,
    const DriverOptions& options);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_PARTITIONER_H_
