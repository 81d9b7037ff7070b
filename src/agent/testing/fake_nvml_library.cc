// A stand-in for libnvidia-ml.so.1 built from FakeNvml, so the tests open a
// real shared library through OpenNvml and call it by NVML's symbol names.
// Its GPUs come from MIGSERVE_FAKE_NVML_GPUS, read by nvmlInit_v2: a
// comma-separated list of products, each a PCI device id (0x2330) or a model
// name (its first product); default one A100-SXM4-80GB.
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "agent/testing/fake_nvml.h"
#include "mig/gpu_catalog.h"

namespace {

using migserve::agent::FakeNvml;

std::unique_ptr<FakeNvml>& Fake() {
  static std::unique_ptr<FakeNvml> fake;
  return fake;
}

FakeNvml& Get() {
  if (!Fake())
    Fake() =
        std::make_unique<FakeNvml>(std::vector<migserve::agent::FakeGpu>{});
  return *Fake();
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  const char* env = std::getenv("MIGSERVE_FAKE_NVML_GPUS");
  std::stringstream names(env != nullptr ? env : "A100-SXM4-80GB");
  std::vector<migserve::agent::FakeGpu> gpus;
  for (std::string name; std::getline(names, name, ',');) {
    auto gpu = migserve::agent::FindFakeGpu(name);
    if (!gpu.ok()) return NVML_ERROR_INVALID_ARGUMENT;
    gpus.push_back(*gpu);
  }
  Fake() = std::make_unique<FakeNvml>(gpus);
  return Fake()->Init();
}
nvmlReturn_t nvmlShutdown(void) { return Get().Shutdown(); }
const char* nvmlErrorString(nvmlReturn_t result) {
  return Get().ErrorString(result);
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return Get().DeviceGetCount(count);
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                           nvmlDevice_t* device) {
  return Get().DeviceGetHandleByIndex(index, device);
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                               unsigned int length) {
  return Get().DeviceGetName(device, name, length);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return Get().DeviceGetPciInfo(device, pci);
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                  unsigned int* pending) {
  return Get().DeviceGetMigMode(device, current, pending);
}
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(
    nvmlDevice_t device, unsigned int profile,
    nvmlGpuInstanceProfileInfo_t* info) {
  return Get().DeviceGetGpuInstanceProfileInfo(device, profile, info);
}
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device,
                                       unsigned int profileId,
                                       nvmlGpuInstance_t* gpuInstances,
                                       unsigned int* count) {
  return Get().DeviceGetGpuInstances(device, profileId, gpuInstances, count);
}
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t device, unsigned int profileId,
    const nvmlGpuInstancePlacement_t* placement,
    nvmlGpuInstance_t* gpuInstance) {
  return Get().DeviceCreateGpuInstanceWithPlacement(device, profileId,
                                                    placement, gpuInstance);
}
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance,
                                    nvmlGpuInstanceInfo_t* info) {
  return Get().GpuInstanceGetInfo(gpuInstance, info);
}
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t gpuInstance, unsigned int profile,
    unsigned int engProfile, nvmlComputeInstanceProfileInfo_t* info) {
  return Get().GpuInstanceGetComputeInstanceProfileInfo(gpuInstance, profile,
                                                        engProfile, info);
}
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(
    nvmlGpuInstance_t gpuInstance, unsigned int profileId,
    nvmlComputeInstance_t* computeInstance) {
  return Get().GpuInstanceCreateComputeInstance(gpuInstance, profileId,
                                                computeInstance);
}
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(
    nvmlGpuInstance_t gpuInstance, unsigned int profileId,
    nvmlComputeInstance_t* computeInstances, unsigned int* count) {
  return Get().GpuInstanceGetComputeInstances(gpuInstance, profileId,
                                              computeInstances, count);
}
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance) {
  return Get().ComputeInstanceDestroy(computeInstance);
}
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance) {
  return Get().GpuInstanceDestroy(gpuInstance);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                     unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  return Get().DeviceGetComputeRunningProcesses(device, infoCount, infos);
}

}  // extern "C"
