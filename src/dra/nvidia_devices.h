// What NVIDIA's DRA driver publishes for a MIG-capable GPU under its
// DynamicMIG feature (kubernetes-sigs/dra-driver-nvidia-gpu, the kubelet
// plugin's partitions.go and mig.go; docs/kubernetes-sources.md 4.2): one
// device per (profile, placement) that the GPU could hold, named
// gpu-<minor>-mig-<profile>-<profile id>-<start>, each consuming the
// counters of its memory slices (and compute) from the GPU's counter set.
// The scheduler tries a ResourceSlice's devices in the order listed, and
// the driver lists them sorted by name: that order is what first-fit
// allocation (first_fit.h) follows.
#ifndef MIGSERVE_DRA_NVIDIA_DEVICES_H_
#define MIGSERVE_DRA_NVIDIA_DEVICES_H_

#include <string>
#include <string_view>
#include <vector>

#include "mig/gpu_model.h"
#include "mig/layout.h"

namespace migserve::dra {

// The DRA device class of MIG devices, and the attribute domain of the
// driver's device attributes (`device.attributes['gpu.nvidia.com'].profile`).
inline constexpr char kMigDeviceClass[] = "mig.nvidia.com";
inline constexpr char kAttributeDomain[] = "gpu.nvidia.com";

// The CEL expression of the driver's device attribute `name`:
// device.attributes['gpu.nvidia.com'].<name>, what a claim's or a device
// class's selector compares.
std::string AttributeCel(std::string_view name);

// One device the driver announces: a MIG instance that may be created.
struct MigDevice {
  std::string name;
  int minor = 0;           // the parent GPU's minor number
  mig::Instance instance;  // profile (index into GpuModel::profiles), start
};

// The driver's name of the device for `instance` on GPU `minor`: the
// profile without dots, lowercased, other characters as '-' (1g.10gb+me is
// "1g10gb-me"), then its NVML GPU-instance profile id and the start.
std::string MigDeviceName(const mig::GpuModel& model, int minor,
                          const mig::Instance& instance);

// Every device the driver announces for GPU `minor` of `model`: each
// profile at each of its starts, every profile included (the driver asks
// NVML for all of them), sorted by name as the ResourceSlice lists them.
std::vector<MigDevice> DynamicMigDevices(const mig::GpuModel& model, int minor);

}  // namespace migserve::dra

#endif  // MIGSERVE_DRA_NVIDIA_DEVICES_H_
