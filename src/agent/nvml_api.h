// The NVML calls the agent makes, as an interface: DlopenNvml forwards them
// to NVIDIA's library, FakeNvml answers them in memory for tests. Methods
// are the nvml.h functions of the same name without the "nvml" prefix and
// version suffix, with the same arguments and return codes.
#ifndef MIGSERVE_AGENT_NVML_API_H_
#define MIGSERVE_AGENT_NVML_API_H_

#include "agent/nvml_types.h"

namespace migserve::agent {

class NvmlApi {
 public:
  virtual ~NvmlApi() = default;

  virtual nvmlReturn_t Init() = 0;
  virtual nvmlReturn_t Shutdown() = 0;
  virtual const char* ErrorString(nvmlReturn_t result) = 0;
  virtual nvmlReturn_t DeviceGetCount(unsigned int* count) = 0;
  virtual nvmlReturn_t DeviceGetHandleByIndex(unsigned int index,
                                              nvmlDevice_t* device) = 0;
  virtual nvmlReturn_t DeviceGetName(nvmlDevice_t device, char* name,
                                     unsigned int length) = 0;
  virtual nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t device,
                                        nvmlPciInfo_t* pci) = 0;
  virtual nvmlReturn_t DeviceGetMigMode(nvmlDevice_t device,
                                        unsigned int* current,
                                        unsigned int* pending) = 0;
  // NVML_ERROR_FUNCTION_NOT_FOUND where the library lacks it.
  virtual nvmlReturn_t DeviceGetComputeRunningProcesses(
      nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos) = 0;
  virtual nvmlReturn_t DeviceGetGpuInstanceProfileInfo(
      nvmlDevice_t device, unsigned int profile,
      nvmlGpuInstanceProfileInfo_t* info) = 0;
  virtual nvmlReturn_t DeviceGetGpuInstances(nvmlDevice_t device,
                                             unsigned int profile_id,
                                             nvmlGpuInstance_t* instances,
                                             unsigned int* count) = 0;
  virtual nvmlReturn_t DeviceCreateGpuInstanceWithPlacement(
      nvmlDevice_t device, unsigned int profile_id,
      const nvmlGpuInstancePlacement_t* placement,
      nvmlGpuInstance_t* instance) = 0;
  virtual nvmlReturn_t GpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                          nvmlGpuInstanceInfo_t* info) = 0;
  virtual nvmlReturn_t GpuInstanceGetComputeInstanceProfileInfo(
      nvmlGpuInstance_t instance, unsigned int profile,
      unsigned int engine_profile, nvmlComputeInstanceProfileInfo_t* info) = 0;
  virtual nvmlReturn_t GpuInstanceCreateComputeInstance(
      nvmlGpuInstance_t instance, unsigned int profile_id,
      nvmlComputeInstance_t* compute) = 0;
  virtual nvmlReturn_t GpuInstanceGetComputeInstances(
      nvmlGpuInstance_t instance, unsigned int profile_id,
      nvmlComputeInstance_t* computes, unsigned int* count) = 0;
  virtual nvmlReturn_t ComputeInstanceDestroy(
      nvmlComputeInstance_t compute) = 0;
  virtual nvmlReturn_t GpuInstanceDestroy(nvmlGpuInstance_t instance) = 0;
};

}  // namespace migserve::agent

#endif  // MIGSERVE_AGENT_NVML_API_H_
