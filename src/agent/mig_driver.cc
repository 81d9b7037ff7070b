#include "agent/mig_driver.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "cluster/cluster_state.h"

namespace migserve::agent {
namespace {

constexpr unsigned int kComputeProfileEnums = 7;
constexpr unsigned int kMaxInstances = 16;

// Returns the profile of `model` that NVML's `info` describes, or -1: the
// one with its profile id and slice count, else the enabled one with its
// slice count and memory within 5%.
int MatchProfile(const mig::GpuModel& model,
                 const nvmlGpuInstanceProfileInfo_t& info) {
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    const mig::Profile& profile = model.profiles[p];
    if (profile.nvml_id == static_cast<int>(info.id) &&
        profile.compute_slices == static_cast<int>(info.sliceCount)) {
      return static_cast<int>(p);
    }
  }
  double memory_gb = static_cast<double>(info.memorySizeMB) / 1024;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    const mig::Profile& profile = model.profiles[p];
    if (profile.enabled_by_default &&
        profile.compute_slices == static_cast<int>(info.sliceCount) &&
        std::abs(profile.memory_gb - memory_gb) <= 0.05 * profile.memory_gb) {
      return static_cast<int>(p);
    }
  }
  return -1;
}

}  // namespace

MigDriver::~MigDriver() { nvml_->Shutdown(); }

Status MigDriver::Check(nvmlReturn_t result, const std::string& what) const {
  if (result == NVML_SUCCESS) return Status::Ok();
  std::string message = fmt::format("{}: NVML error {} ({})", what, result,
                                    nvml_->ErrorString(result));
  if (result == NVML_ERROR_IN_USE) {
    return Status::FailedPrecondition(message + ": in use, not forced");
  }
  return Status::Unavailable(message);
}

StatusOr<std::unique_ptr<MigDriver>> MigDriver::Open(
    NvmlApi* nvml, const mig::GpuCatalog& catalog,
    const std::optional<std::string>& gpu_name) {
  std::unique_ptr<MigDriver> driver(new MigDriver(nvml));
  if (nvml->Init() != NVML_SUCCESS) {
    return Status::Unavailable("NVML did not initialize");
  }
  unsigned int count = 0;
  MIGSERVE_RETURN_IF_ERROR(
      driver->Check(nvml->DeviceGetCount(&count), "counting GPUs"));
  for (unsigned int i = 0; i < count; ++i) {
    Gpu gpu{};
    std::string where = fmt::format("GPU {}", i);
    MIGSERVE_RETURN_IF_ERROR(
        driver->Check(nvml->DeviceGetHandleByIndex(i, &gpu.device), where));
    std::array<char, 96> name{};
    MIGSERVE_RETURN_IF_ERROR(driver->Check(
        nvml->DeviceGetName(gpu.device, name.data(), name.size()), where));
    nvmlPciInfo_t pci{};
    MIGSERVE_RETURN_IF_ERROR(
        driver->Check(nvml->DeviceGetPciInfo(gpu.device, &pci), where));
    gpu.product = name.data();
    gpu.pci_device_id = static_cast<int>(pci.pciDeviceId >> 16);
    StatusOr<const mig::GpuModel*> model =
        gpu_name ? catalog.Find(*gpu_name)
                 : catalog.FindByPciDeviceId(pci.pciDeviceId);
    if (!model.ok()) {
      return Status::InvalidArgument(fmt::format(
          "{} is \"{}\" (PCI device id {:#06x}): {}", where, gpu.product,
          gpu.pci_device_id, model.status().message()));
    }
    gpu.model = *model;
    unsigned int current = 0, pending = 0;
    MIGSERVE_RETURN_IF_ERROR(driver->Check(
        nvml->DeviceGetMigMode(gpu.device, &current, &pending), where));
    if (current != NVML_DEVICE_MIG_ENABLE) {
      return Status::InvalidArgument(fmt::format(
          "{}: MIG mode is off (enable it once, with the GPU idle)", where));
    }
    gpu.profile_ids.assign(gpu.model->profiles.size(), -1);
    for (unsigned int e = 0; e < NVML_GPU_INSTANCE_PROFILE_ENUM_LIMIT; ++e) {
      nvmlGpuInstanceProfileInfo_t info{};
      if (nvml->DeviceGetGpuInstanceProfileInfo(gpu.device, e, &info) !=
          NVML_SUCCESS) {
        continue;
      }
      int p = MatchProfile(*gpu.model, info);
      if (p >= 0) gpu.profile_ids[p] = static_cast<int>(info.id);
    }
    driver->gpus_.push_back(std::move(gpu));
  }
  return driver;
}

std::string MigDriver::Name(int index, const mig::Instance& instance) const {
  return fmt::format("GPU {} {}@{}", index,
                     gpus_[index].model->profiles[instance.profile].name,
                     instance.start);
}

StatusOr<std::vector<std::pair<nvmlGpuInstance_t, int>>> MigDriver::Instances(
    int index, int profile) {
  const Gpu& gpu = gpus_.at(index);
  std::string what = fmt::format("GPU {} {} instances", index,
                                 gpu.model->profiles[profile].name);
  std::array<nvmlGpuInstance_t, kMaxInstances> handles{};
  unsigned int count = kMaxInstances;
  MIGSERVE_RETURN_IF_ERROR(
      Check(nvml_->DeviceGetGpuInstances(gpu.device, gpu.profile_ids[profile],
                                         handles.data(), &count),
            what));
  std::vector<std::pair<nvmlGpuInstance_t, int>> out;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlGpuInstanceInfo_t info{};
    MIGSERVE_RETURN_IF_ERROR(
        Check(nvml_->GpuInstanceGetInfo(handles[i], &info), what));
    out.emplace_back(handles[i], static_cast<int>(info.placement.start));
  }
  return out;
}

StatusOr<mig::Layout> MigDriver::ReadLayout(int index) {
  const Gpu& gpu = gpus_.at(index);
  std::vector<mig::Instance> instances;
  for (size_t p = 0; p < gpu.profile_ids.size(); ++p) {
    if (gpu.profile_ids[p] < 0) continue;
    MIGSERVE_ASSIGN_OR_RETURN(auto found,
                              Instances(index, static_cast<int>(p)));
    for (const auto& [handle, start] : found) {
      instances.push_back({static_cast<int>(p), start});
    }
  }
  return mig::Layout(std::move(instances));
}

StatusOr<nvmlGpuInstance_t> MigDriver::FindInstance(
    int index, const mig::Instance& instance) {
  MIGSERVE_ASSIGN_OR_RETURN(auto found, Instances(index, instance.profile));
  for (const auto& [handle, start] : found) {
    if (start == instance.start) return handle;
  }
  return Status::FailedPrecondition(Name(index, instance) + ": not found");
}

Status MigDriver::Destroy(int index, const mig::Instance& instance) {
  MIGSERVE_ASSIGN_OR_RETURN(nvmlGpuInstance_t gi,
                            FindInstance(index, instance));
  std::string what = Name(index, instance);
  for (unsigned int e = 0; e < kComputeProfileEnums; ++e) {
    nvmlComputeInstanceProfileInfo_t info{};
    if (nvml_->GpuInstanceGetComputeInstanceProfileInfo(
            gi, e, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info) !=
        NVML_SUCCESS) {
      continue;
    }
    std::array<nvmlComputeInstance_t, kMaxInstances> cis{};
    unsigned int count = kMaxInstances;
    MIGSERVE_RETURN_IF_ERROR(Check(
        nvml_->GpuInstanceGetComputeInstances(gi, info.id, cis.data(), &count),
        what));
    for (unsigned int i = 0; i < count; ++i) {
      MIGSERVE_RETURN_IF_ERROR(
          Check(nvml_->ComputeInstanceDestroy(cis[i]), what));
    }
  }
  return Check(nvml_->GpuInstanceDestroy(gi), what);
}

Status MigDriver::CheckIdle(int index,
                            const std::vector<mig::Instance>& instances) {
  if (instances.empty()) return Status::Ok();
  std::vector<nvmlProcessInfo_t> processes(64);
  unsigned int count = static_cast<unsigned int>(processes.size());
  nvmlDevice_t device = gpus_[index].device;
  nvmlReturn_t r =
      nvml_->DeviceGetComputeRunningProcesses(device, &count, processes.data());
  if (r == NVML_ERROR_INSUFFICIENT_SIZE) {  // more started since: room
    processes.resize(count + 64);
    count = static_cast<unsigned int>(processes.size());
    r = nvml_->DeviceGetComputeRunningProcesses(device, &count,
                                                processes.data());
  }
  if (r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NOT_SUPPORTED ||
      r == NVML_ERROR_NO_PERMISSION) {
    return Status::Ok();
  }
  MIGSERVE_RETURN_IF_ERROR(
      Check(r, fmt::format("GPU {}: listing running processes", index)));
  processes.resize(count);
  for (const mig::Instance& instance : instances) {
    MIGSERVE_ASSIGN_OR_RETURN(nvmlGpuInstance_t gi,
                              FindInstance(index, instance));
    nvmlGpuInstanceInfo_t info{};
    MIGSERVE_RETURN_IF_ERROR(
        Check(nvml_->GpuInstanceGetInfo(gi, &info), Name(index, instance)));
    for (const nvmlProcessInfo_t& p : processes) {
      if (p.gpuInstanceId != info.id) continue;
      return Status::FailedPrecondition(
          fmt::format("{}: in use by process {}; nothing was destroyed",
                      Name(index, instance), p.pid));
    }
  }
  return Status::Ok();
}

Status MigDriver::Create(int index, const mig::Instance& instance) {
  const Gpu& gpu = gpus_[index];
  const mig::Profile& profile = gpu.model->profiles[instance.profile];
  std::string what = Name(index, instance);
  if (gpu.profile_ids[instance.profile] < 0) {
    return Status::InvalidArgument(what + ": the driver has no such profile");
  }
  nvmlGpuInstancePlacement_t placement{
      static_cast<unsigned int>(instance.start),
      static_cast<unsigned int>(profile.memory_slices)};
  nvmlGpuInstance_t gi = nullptr;
  MIGSERVE_RETURN_IF_ERROR(
      Check(nvml_->DeviceCreateGpuInstanceWithPlacement(
                gpu.device, gpu.profile_ids[instance.profile], &placement, &gi),
            what));
  for (unsigned int e = 0; e < kComputeProfileEnums; ++e) {
    nvmlComputeInstanceProfileInfo_t info{};
    if (nvml_->GpuInstanceGetComputeInstanceProfileInfo(
            gi, e, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info) !=
            NVML_SUCCESS ||
        static_cast<int>(info.sliceCount) != profile.compute_slices) {
      continue;
    }
    nvmlComputeInstance_t ci = nullptr;
    Status made =
        Check(nvml_->GpuInstanceCreateComputeInstance(gi, info.id, &ci), what);
    if (!made.ok()) nvml_->GpuInstanceDestroy(gi);
    return made;
  }
  nvml_->GpuInstanceDestroy(gi);
  return Status::Unavailable(what + ": no full-size compute instance profile");
}

Status MigDriver::Apply(int index, const mig::Reconfiguration& change) {
  if (index < 0 || index >= gpu_count()) {
    return Status::InvalidArgument(fmt::format("no GPU {}", index));
  }
  MIGSERVE_ASSIGN_OR_RETURN(mig::Layout live, ReadLayout(index));
  std::string why;
  if (!mig::IsLegalReconfiguration(model(index),
                                   cluster::ControllerMigOptions(), live,
                                   change, nullptr, &why)) {
    return Status::FailedPrecondition(
        fmt::format("GPU {}: cannot apply to its live layout {}: {}", index,
                    live.ToString(model(index)), why));
  }
  // All idle first: one in use found half way would fail the request after
  // idle instances were destroyed.
  MIGSERVE_RETURN_IF_ERROR(CheckIdle(index, change.remove));
  for (const mig::Instance& i : change.remove) {
    MIGSERVE_RETURN_IF_ERROR(Destroy(index, i));
  }
  for (const mig::Instance& i : change.add) {
    MIGSERVE_RETURN_IF_ERROR(Create(index, i));
  }
  return Status::Ok();
}

}  // namespace migserve::agent
