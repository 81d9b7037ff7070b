// Partial MIG reconfiguration of one node's GPUs through NVML (paper 3.3;
// the recipe of notes/kubernetes.md section 5): read each GPU's live layout,
// destroy only the instances a change removes (compute instances first,
// then the GPU instance), create only those it adds at their explicit
// placement with one full-size compute instance. Instances outside the
// change are never touched; an instance in use is reported, never forced.
#ifndef MIGSERVE_AGENT_MIG_DRIVER_H_
#define MIGSERVE_AGENT_MIG_DRIVER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/nvml_api.h"
#include "mig/gpu_catalog.h"
#include "mig/reconfiguration.h"
#include "util/status_or.h"

namespace migserve::agent {

class MigDriver {
 public:
  // Initializes `nvml` (not owned; outlives the driver) and matches every
  // GPU with the catalog model that lists its PCI device id (NVML's
  // pciDeviceId), or with the model `gpu_name` if given. Returns Unavailable
  // if NVML fails, InvalidArgument for a GPU no model matches or one
  // without MIG mode on.
  static StatusOr<std::unique_ptr<MigDriver>> Open(
      NvmlApi* nvml, const mig::GpuCatalog& catalog,
      const std::optional<std::string>& gpu_name = std::nullopt);
  ~MigDriver();

  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  const mig::GpuModel& model(int index) const { return *gpus_[index].model; }
  // NVML's name of GPU `index` ("NVIDIA H100 80GB HBM3") and its PCI device
  // id (0x2330).
  const std::string& product(int index) const { return gpus_[index].product; }
  int pci_device_id(int index) const { return gpus_[index].pci_device_id; }

  // Returns the GPU instances of GPU `index` as they are now.
  StatusOr<mig::Layout> ReadLayout(int index);

  // Applies `change` to GPU `index`. Returns FailedPrecondition if the live
  // layout does not allow it (a removed instance is missing, or the result
  // would be illegal) or if an instance to remove is in use (NVML IN_USE:
  // the message names it; what was done before stays, re-read the layout).
  Status Apply(int index, const mig::Reconfiguration& change);

 private:
  struct Gpu {
    nvmlDevice_t device;
    const mig::GpuModel* model;
    std::string product;
    int pci_device_id;
    std::vector<int> profile_ids;  // NVML profile id per profile, or -1
  };

  explicit MigDriver(NvmlApi* nvml) : nvml_(nvml) {}
  Status Check(nvmlReturn_t result, const std::string& what) const;
  // Returns the GPU instances of `profile` on GPU `index` and their starts.
  StatusOr<std::vector<std::pair<nvmlGpuInstance_t, int>>> Instances(
      int index, int profile);
  StatusOr<nvmlGpuInstance_t> FindInstance(int index,
                                           const mig::Instance& instance);
  Status Destroy(int index, const mig::Instance& instance);
  // FailedPrecondition naming the process if one of `instances` of GPU
  // `index` runs one; OK if none does or NVML cannot tell (a driver without
  // the query: then destroying fails on an instance in use instead).
  Status CheckIdle(int index, const std::vector<mig::Instance>& instances);
  Status Create(int index, const mig::Instance& instance);
  std::string Name(int index, const mig::Instance& instance) const;

  NvmlApi* nvml_;
  std::vector<Gpu> gpus_;
};

}  // namespace migserve::agent

#endif  // MIGSERVE_AGENT_MIG_DRIVER_H_
