#include "agent/dlopen_nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace migserve::agent {
namespace {

class DlopenNvml : public NvmlApi {
 public:
  explicit DlopenNvml(void* library) : library_(library) {}
  ~DlopenNvml() override { dlclose(library_); }

  Status Bind(const std::string& path) {
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlInit_v2", &init_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlShutdown", &shutdown_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlErrorString", &error_string_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlDeviceGetCount_v2", &count_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlDeviceGetHandleByIndex_v2", &handle_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlDeviceGetName", &name_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlDeviceGetPciInfo_v3", &pci_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlDeviceGetMigMode", &mig_mode_));
    // Optional (drivers before R510 lack it): without it the agent learns
    // that an instance is in use only when destroying it fails.
    processes_ = reinterpret_cast<decltype(processes_)>(
        dlsym(library_, "nvmlDeviceGetComputeRunningProcesses_v3"));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlDeviceGetGpuInstanceProfileInfo", &profile_info_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlDeviceGetGpuInstances", &instances_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlDeviceCreateGpuInstanceWithPlacement", &create_gi_));
    MIGSERVE_RETURN_IF_ERROR(Find(path, "nvmlGpuInstanceGetInfo", &gi_info_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
             &ci_profile_info_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlGpuInstanceCreateComputeInstance", &create_ci_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlGpuInstanceGetComputeInstances", &computes_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlComputeInstanceDestroy", &destroy_ci_));
    MIGSERVE_RETURN_IF_ERROR(
        Find(path, "nvmlGpuInstanceDestroy", &destroy_gi_));
    return Status::Ok();
  }

  nvmlReturn_t Init() override { return init_(); }
  nvmlReturn_t Shutdown() override { return shutdown_(); }
  const char* ErrorString(nvmlReturn_t result) override {
    return error_string_(result);
  }
  nvmlReturn_t DeviceGetCount(unsigned int* count) override {
    return count_(count);
  }
  nvmlReturn_t DeviceGetHandleByIndex(unsigned int index,
                                      nvmlDevice_t* device) override {
    return handle_(index, device);
  }
  nvmlReturn_t DeviceGetName(nvmlDevice_t device, char* name,
                             unsigned int length) override {
    return name_(device, name, length);
  }
  nvmlReturn_t DeviceGetComputeRunningProcesses(
      nvmlDevice_t device, unsigned int* count,
      nvmlProcessInfo_t* infos) override {
    if (processes_ == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
    return processes_(device, count, infos);
  }
  nvmlReturn_t DeviceGetPciInfo(nvmlDevice_t device,
                                nvmlPciInfo_t* pci) override {
    return pci_(device, pci);
  }
  nvmlReturn_t DeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                unsigned int* pending) override {
    return mig_mode_(device, current, pending);
  }
  nvmlReturn_t DeviceGetGpuInstanceProfileInfo(
      nvmlDevice_t device, unsigned int profile,
      nvmlGpuInstanceProfileInfo_t* info) override {
    return profile_info_(device, profile, info);
  }
  nvmlReturn_t DeviceGetGpuInstances(nvmlDevice_t device,
                                     unsigned int profile_id,
                                     nvmlGpuInstance_t* instances,
                                     unsigned int* count) override {
    return instances_(device, profile_id, instances, count);
  }
  nvmlReturn_t DeviceCreateGpuInstanceWithPlacement(
      nvmlDevice_t device, unsigned int profile_id,
      const nvmlGpuInstancePlacement_t* placement,
      nvmlGpuInstance_t* instance) override {
    return create_gi_(device, profile_id, placement, instance);
  }
  nvmlReturn_t GpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                  nvmlGpuInstanceInfo_t* info) override {
    return gi_info_(instance, info);
  }
  nvmlReturn_t GpuInstanceGetComputeInstanceProfileInfo(
      nvmlGpuInstance_t instance, unsigned int profile,
      unsigned int engine_profile,
      nvmlComputeInstanceProfileInfo_t* info) override {
    return ci_profile_info_(instance, profile, engine_profile, info);
  }
  nvmlReturn_t GpuInstanceCreateComputeInstance(
      nvmlGpuInstance_t instance, unsigned int profile_id,
      nvmlComputeInstance_t* compute) override {
    return create_ci_(instance, profile_id, compute);
  }
  nvmlReturn_t GpuInstanceGetComputeInstances(nvmlGpuInstance_t instance,
                                              unsigned int profile_id,
                                              nvmlComputeInstance_t* computes,
                                              unsigned int* count) override {
    return computes_(instance, profile_id, computes, count);
  }
  nvmlReturn_t ComputeInstanceDestroy(nvmlComputeInstance_t compute) override {
    return destroy_ci_(compute);
  }
  nvmlReturn_t GpuInstanceDestroy(nvmlGpuInstance_t instance) override {
    return destroy_gi_(instance);
  }

 private:
  template <typename F>
  Status Find(const std::string& path, const char* symbol, F* out) {
    *out = reinterpret_cast<F>(dlsym(library_, symbol));
    if (*out != nullptr) return Status::Ok();
    return Status::Unavailable(
        fmt::format("{}: no symbol {} (driver too old?)", path, symbol));
  }

  void* library_;
  decltype(&nvmlInit_v2) init_ = nullptr;
  decltype(&nvmlShutdown) shutdown_ = nullptr;
  decltype(&nvmlErrorString) error_string_ = nullptr;
  decltype(&nvmlDeviceGetCount_v2) count_ = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) processes_ = nullptr;
  decltype(&nvmlDeviceGetHandleByIndex_v2) handle_ = nullptr;
  decltype(&nvmlDeviceGetName) name_ = nullptr;
  decltype(&nvmlDeviceGetPciInfo_v3) pci_ = nullptr;
  decltype(&nvmlDeviceGetMigMode) mig_mode_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstanceProfileInfo) profile_info_ = nullptr;
  decltype(&nvmlDeviceGetGpuInstances) instances_ = nullptr;
  decltype(&nvmlDeviceCreateGpuInstanceWithPlacement) create_gi_ = nullptr;
  decltype(&nvmlGpuInstanceGetInfo) gi_info_ = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstanceProfileInfo) ci_profile_info_ =
      nullptr;
  decltype(&nvmlGpuInstanceCreateComputeInstance) create_ci_ = nullptr;
  decltype(&nvmlGpuInstanceGetComputeInstances) computes_ = nullptr;
  decltype(&nvmlComputeInstanceDestroy) destroy_ci_ = nullptr;
  decltype(&nvmlGpuInstanceDestroy) destroy_gi_ = nullptr;
};

}  // namespace

StatusOr<std::unique_ptr<NvmlApi>> OpenNvml(const std::string& path) {
  // NODELETE: NVML stays loaded until the process ends, whatever closes
  // it. The agent needs it for its whole life, and a library's state (the
  // fake NVML's GPU tables, kept in statics) is not lost at a dlclose(),
  // where LeakSanitizer would report it.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable(fmt::format(
        "cannot open NVML ({}): {}; the agent needs NVIDIA's driver on the "
        "node",
        path, why != nullptr ? why : "unknown error"));
  }
  auto nvml = std::make_unique<DlopenNvml>(library);
  MIGSERVE_RETURN_IF_ERROR(nvml->Bind(path));
  return std::unique_ptr<NvmlApi>(std::move(nvml));
}

}  // namespace migserve::agent
