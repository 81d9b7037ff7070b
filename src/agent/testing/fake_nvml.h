// NVML in memory, for tests on machines without a GPU: GPUs from the
// geometry tables (data/gpus/), MIG mode on, GPU instances only at the
// placements their profile allows and never overlapping (the tables'
// rules), one full-size compute instance per GPU instance, and processes:
// a GPU instance marked in use refuses to lose its compute instance
// (NVML_ERROR_IN_USE), as the driver does while a CUDA process runs there.
#ifndef MIGSERVE_AGENT_TESTING_FAKE_NVML_H_
#define MIGSERVE_AGENT_TESTING_FAKE_NVML_H_

#include <memory>
#include <mutex>
#include <vector>

#include "agent/nvml_api.h"
#include "mig/gpu_model.h"
#include "mig/layout.h"
#include "util/status_or.h"

namespace migserve::agent {

// One fake GPU: its geometry and the product it claims to be (the NVML name
// and PCI device id that DeviceGetName and DeviceGetPciInfo report).
struct FakeGpu {
  // The model's first product (implicit, so a list of models will do).
  FakeGpu(const mig::GpuModel* model);  // NOLINT(google-explicit-constructor)
  FakeGpu(const mig::GpuModel* model, mig::Product product)
      : model(model), product(std::move(product)) {}

  const mig::GpuModel* model;
  mig::Product product;
};

// Returns the fake GPU of `spec`: a PCI device id ("0x2330", the product
// with it) or a model name (its first product). Returns NotFound if no
// catalog table has it.
StatusOr<FakeGpu> FindFakeGpu(const std::string& spec);

class FakeNvml : public NvmlApi {
 public:
  // One GPU per entry of `gpus`, in index order, with no instances.
  explicit FakeNvml(const std::vector<FakeGpu>& gpus);
  ~FakeNvml() override;

  // Marks the GPU instance `instance` of GPU `index` as running a process.
  void SetInUse(int index, const mig::Instance& instance, bool in_use);
  // Makes the next call that changes instances fail with `result`.
  void FailNext(nvmlReturn_t result);
  // Returns the GPU instances of GPU `index`.
  mig::Layout Layout(int index) const;
  // Returns how many calls changed instances (creates and destroys).
  int changes() const;

  nvmlReturn_t Init() override;
  nvmlReturn_t Shutdown() override;
  const char* ErrorString(nvmlReturn_t result) override;
  nvmlReturn_t DeviceGetCount(unsigned int* count) override;
  nvmlReturn_t DeviceGetHandleByIndex(unsigned int index,
                                      nvmlDevice_t* device) override;
  nvmlReturn_t DeviceGetName(nvmlDevice_t device, char* name,
                             unsigned int length) override;
  nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t device,
                                nvmlPciInfo_t* pci) override;
  nvmlReturn_t DeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                unsigned int* pending) override;
  nvmlReturn_t DeviceGetGpuInstanceProfileInfo(
      nvmlDevice_t device, unsigned int profile,
      nvmlGpuInstanceProfileInfo_t* info) override;
  nvmlReturn_t DeviceGetGpuInstances(nvmlDevice_t device,
                                     unsigned int profile_id,
                                     nvmlGpuInstance_t* instances,
                                     unsigned int* count) override;
  nvmlReturn_t DeviceCreateGpuInstanceWithPlacement(
      nvmlDevice_t device, unsigned int profile_id,
      const nvmlGpuInstancePlacement_t* placement,
      nvmlGpuInstance_t* instance) override;
  nvmlReturn_t GpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                  nvmlGpuInstanceInfo_t* info) override;
  nvmlReturn_t GpuInstanceGetComputeInstanceProfileInfo(
      nvmlGpuInstance_t instance, unsigned int profile,
      unsigned int engine_profile,
      nvmlComputeInstanceProfileInfo_t* info) override;
  nvmlReturn_t GpuInstanceCreateComputeInstance(
      nvmlGpuInstance_t instance, unsigned int profile_id,
      nvmlComputeInstance_t* compute) override;
  nvmlReturn_t GpuInstanceGetComputeInstances(nvmlGpuInstance_t instance,
                                              unsigned int profile_id,
                                              nvmlComputeInstance_t* computes,
                                              unsigned int* count) override;
  nvmlReturn_t ComputeInstanceDestroy(nvmlComputeInstance_t compute) override;
  nvmlReturn_t GpuInstanceDestroy(nvmlGpuInstance_t instance) override;
  // One process (pid 1000 + the instance's id) on each instance in use.
  nvmlReturn_t DeviceGetComputeRunningProcesses(
      nvmlDevice_t device, unsigned int* count,
      nvmlProcessInfo_t* infos) override;

 private:
  struct Gpu;
  struct GpuInstance;
  struct ComputeInstance;

  Gpu* FindGpu(nvmlDevice_t device) const;
  GpuInstance* FindInstance(nvmlGpuInstance_t handle) const;
  // Returns and clears the injected failure, counting the change.
  nvmlReturn_t Change();

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  bool initialized_ = false;
  nvmlReturn_t fail_next_ = NVML_SUCCESS;
  int changes_ = 0;
};

// The NVML profile enum (0 = 1 slice, 1 = 2 slices, ...) of `profile`.
unsigned int NvmlProfileEnum(const mig::Profile& profile);

}  // namespace migserve::agent

#endif  // MIGSERVE_AGENT_TESTING_FAKE_NVML_H_
