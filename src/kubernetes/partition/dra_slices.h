// The GPUs NVIDIA's DRA driver publishes in its ResourceSlices
// (docs/kubernetes.md, "Claims that land on the plan"): each node's whole GPUs,
// the devices `gpu-<minor>` with attributes `uuid` and `productName`, read by
// `export --flavor dra --resource-slices` (to pin each claim to its GPU)
// and by the controller's DRA partition driver (the GPUs of a node).
#ifndef MIGSERVE_KUBERNETES_PARTITION_DRA_SLICES_H_
#define MIGSERVE_KUBERNETES_PARTITION_DRA_SLICES_H_

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kubernetes/cluster_model.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

struct SliceGpu {
  std::string uuid;
  std::string product;  // NVML's name ("NVIDIA H100 80GB HBM3"); may be ""
  std::string slice;    // the ResourceSlice that lists it
  // The names of the MIG devices the driver offers on it
  // (gpu-<minor>-mig-<profile>-<id>-<start>: with DynamicMIG every profile
  // at every start; dra/nvidia_devices.h).
  std::set<std::string> mig_devices;
};

// By node and minor number.
using SliceGpus = std::map<std::pair<std::string, int>, SliceGpu>;

// The GPUs of NVIDIA's driver (gpu.nvidia.com) in `slices`, ResourceSlice
// objects; other drivers' slices and devices other than whole GPUs are
// skipped; the MIG devices of each GPU (gpu-<minor>-mig-...) are kept by
// name. Read leniently, as what a cluster says (a field of another type
// is absent), but InvalidArgument naming `source`, the slice and the device
// where a GPU has no node or no plain `uuid` attribute, or where two GPUs
// share a UUID.
StatusOr<SliceGpus> GpusOfSlices(const std::vector<nlohmann::json>& slices,
                                 const std::string& source);

// InvalidArgument, naming `source` and the GPU, where a GPU `state` serves
// on is in none of `gpus`, is another product there, or lacks a MIG device
// (by name: its profile at its start) for an instance of its layout: a
// claim for that instance could not be allocated (DynamicMIG off, or a
// slice that offers other profiles).
Status CheckSlicesCover(const SliceGpus& gpus, const ClusterState& state,
                        const std::string& source);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_DRA_SLICES_H_
