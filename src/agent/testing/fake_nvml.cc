#include "agent/testing/fake_nvml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cluster/cluster_state.h"
#include "mig/gpu_catalog.h"

namespace migserve::agent {

struct FakeNvml::ComputeInstance {
  GpuInstance* parent;
  unsigned int id;
};

struct FakeNvml::GpuInstance {
  Gpu* gpu;
  unsigned int id;
  mig::Instance instance;
  bool in_use = false;
  std::vector<std::unique_ptr<ComputeInstance>> computes;
};

struct FakeNvml::Gpu {
  const mig::GpuModel* model;
  mig::Product product;
  std::vector<std::unique_ptr<GpuInstance>> instances;
  unsigned int next_id = 1;

  mig::Layout layout() const {
    std::vector<mig::Instance> all;
    for (const auto& gi : instances) all.push_back(gi->instance);
    return mig::Layout(std::move(all));
  }
  // Returns the profile whose NVML profile id is `id`, or -1.
  int ProfileById(unsigned int id) const {
    for (size_t p = 0; p < model->profiles.size(); ++p) {
      if (static_cast<unsigned int>(model->profiles[p].nvml_id) == id) {
        return static_cast<int>(p);
      }
    }
    return -1;
  }
};

namespace {

// NVML's compute instance profile enum for a slice count, by nvml.h order.
constexpr unsigned int kComputeSlices[] = {1, 2, 3, 4, 7, 8, 6};

// NVML's way of returning a list: `*count` holds the room in `out` and
// returns the number found; too little room is INSUFFICIENT_SIZE.
template <typename Handle>
nvmlReturn_t CopyOut(const std::vector<Handle>& found, Handle* out,
                     unsigned int* count) {
  unsigned int room = *count;
  *count = static_cast<unsigned int>(found.size());
  if (found.size() > room || (out == nullptr && !found.empty())) {
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(found.begin(), found.end(), out);
  return NVML_SUCCESS;
}

}  // namespace

unsigned int NvmlProfileEnum(const mig::Profile& profile) {
  bool media = profile.name.find("+me") != std::string::npos;
  if (media) return profile.compute_slices == 1 ? 7 : 8;
  if (!profile.enabled_by_default) return 9;  // 1g with double memory
  for (unsigned int e = 0; e < std::size(kComputeSlices); ++e) {
    if (kComputeSlices[e] ==
        static_cast<unsigned int>(profile.compute_slices)) {
      return e;
    }
  }
  return NVML_GPU_INSTANCE_PROFILE_ENUM_LIMIT;
}

FakeGpu::FakeGpu(const mig::GpuModel* model)
    : model(model),
      product(model->products.empty() ? mig::Product{0, "NVIDIA " + model->name}
                                      : model->products.front()) {}

StatusOr<FakeGpu> FindFakeGpu(const std::string& spec) {
  const mig::GpuCatalog& catalog = mig::GpuCatalog::Default();
  if (spec.rfind("0x", 0) == 0) {
    auto id = static_cast<int>(std::strtol(spec.c_str(), nullptr, 16));
    MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* model,
                              catalog.FindByPciDeviceId(id));
    for (const mig::Product& p : model->products) {
      if (p.pci_device_id == id) return FakeGpu(model, p);
    }
    return FakeGpu(model, {id, "NVIDIA " + model->name});
  }
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* model, catalog.Find(spec));
  if (model->products.empty()) {
    return Status::NotFound(
        fmt::format("GPU table {} lists no product", model->name));
  }
  return FakeGpu(model);
}

FakeNvml::FakeNvml(const std::vector<FakeGpu>& gpus) {
  for (const FakeGpu& spec : gpus) {
    auto gpu = std::make_unique<Gpu>();
    gpu->model = spec.model;
    gpu->product = spec.product;
    gpus_.push_back(std::move(gpu));
  }
}

FakeNvml::~FakeNvml() = default;

void FakeNvml::SetInUse(int index, const mig::Instance& instance, bool in_use) {
  std::lock_guard lock(mu_);
  for (auto& gi : gpus_.at(index)->instances) {
    if (gi->instance == instance) gi->in_use = in_use;
  }
}

void FakeNvml::FailNext(nvmlReturn_t result) {
  std::lock_guard lock(mu_);
  fail_next_ = result;
}

mig::Layout FakeNvml::Layout(int index) const {
  std::lock_guard lock(mu_);
  return gpus_.at(index)->layout();
}

int FakeNvml::changes() const {
  std::lock_guard lock(mu_);
  return changes_;
}

FakeNvml::Gpu* FakeNvml::FindGpu(nvmlDevice_t device) const {
  for (const auto& gpu : gpus_) {
    if (reinterpret_cast<nvmlDevice_t>(gpu.get()) == device) return gpu.get();
  }
  return nullptr;
}

FakeNvml::GpuInstance* FakeNvml::FindInstance(nvmlGpuInstance_t handle) const {
  for (const auto& gpu : gpus_) {
    for (const auto& gi : gpu->instances) {
      if (reinterpret_cast<nvmlGpuInstance_t>(gi.get()) == handle) {
        return gi.get();
      }
    }
  }
  return nullptr;
}

nvmlReturn_t FakeNvml::Change() {
  ++changes_;
  nvmlReturn_t result = fail_next_;
  fail_next_ = NVML_SUCCESS;
  return result;
}

nvmlReturn_t FakeNvml::Init() {
  std::lock_guard lock(mu_);
  initialized_ = true;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::Shutdown() {
  std::lock_guard lock(mu_);
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  initialized_ = false;
  return NVML_SUCCESS;
}

const char* FakeNvml::ErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient Resources";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t FakeNvml::DeviceGetCount(unsigned int* count) {
  std::lock_guard lock(mu_);
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  *count = static_cast<unsigned int>(gpus_.size());
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::DeviceGetHandleByIndex(unsigned int index,
                                              nvmlDevice_t* device) {
  std::lock_guard lock(mu_);
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  if (index >= gpus_.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = reinterpret_cast<nvmlDevice_t>(gpus_[index].get());
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::DeviceGetName(nvmlDevice_t device, char* name,
                                     unsigned int length) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::string& full = gpu->product.name;
  if (full.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(name, full.c_str(), full.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::DeviceGetPciInfo(nvmlDevice_t device,
                                        nvmlPciInfo_t* pci) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = {};
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (gpus_[i].get() == gpu) pci->bus = static_cast<unsigned int>(i) + 1;
  }
  pci->pciDeviceId =
      static_cast<unsigned int>(gpu->product.pci_device_id) << 16 | 0x10DE;
  std::snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::DeviceGetMigMode(nvmlDevice_t device,
                                        unsigned int* current,
                                        unsigned int* pending) {
  std::lock_guard lock(mu_);
  if (FindGpu(device) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = NVML_DEVICE_MIG_ENABLE;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::DeviceGetGpuInstanceProfileInfo(
    nvmlDevice_t device, unsigned int profile,
    nvmlGpuInstanceProfileInfo_t* info) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  for (const mig::Profile& p : gpu->model->profiles) {
    if (NvmlProfileEnum(p) != profile) continue;
    *info = {};
    info->id = static_cast<unsigned int>(p.nvml_id);
    info->sliceCount = static_cast<unsigned int>(p.compute_slices);
    info->instanceCount = static_cast<unsigned int>(
        p.max_count > 0 ? p.max_count : static_cast<int>(p.starts.size()));
    info->memorySizeMB = static_cast<unsigned long long>(p.memory_gb * 1024);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t FakeNvml::DeviceGetGpuInstances(nvmlDevice_t device,
                                             unsigned int profile_id,
                                             nvmlGpuInstance_t* instances,
                                             unsigned int* count) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  int profile = gpu->ProfileById(profile_id);
  if (profile < 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<nvmlGpuInstance_t> found;
  for (const auto& gi : gpu->instances) {
    if (gi->instance.profile == profile) {
      found.push_back(reinterpret_cast<nvmlGpuInstance_t>(gi.get()));
    }
  }
  return CopyOut(found, instances, count);
}

nvmlReturn_t FakeNvml::DeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t device, unsigned int profile_id,
    const nvmlGpuInstancePlacement_t* placement, nvmlGpuInstance_t* instance) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr || placement == nullptr || instance == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  int profile = gpu->ProfileById(profile_id);
  if (profile < 0) return NVML_ERROR_INVALID_ARGUMENT;
  const mig::Profile& p = gpu->model->profiles[profile];
  bool allowed =
      std::find(p.starts.begin(), p.starts.end(),
                static_cast<int>(placement->start)) != p.starts.end();
  if (!allowed ||
      placement->size != static_cast<unsigned int>(p.memory_slices)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  mig::Instance wanted{profile, static_cast<int>(placement->start)};
  mig::Layout after = gpu->layout();
  after.Add(wanted);
  if (!mig::IsLegal(*gpu->model, after, cluster::ControllerMigOptions())) {
    return NVML_ERROR_INSUFFICIENT_RESOURCES;
  }
  if (nvmlReturn_t r = Change(); r != NVML_SUCCESS) return r;
  auto gi = std::make_unique<GpuInstance>();
  gi->gpu = gpu;
  gi->id = gpu->next_id++;
  gi->instance = wanted;
  *instance = reinterpret_cast<nvmlGpuInstance_t>(gi.get());
  gpu->instances.push_back(std::move(gi));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::GpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                          nvmlGpuInstanceInfo_t* info) {
  std::lock_guard lock(mu_);
  GpuInstance* gi = FindInstance(instance);
  if (gi == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const mig::Profile& p = gi->gpu->model->profiles[gi->instance.profile];
  info->device = reinterpret_cast<nvmlDevice_t>(gi->gpu);
  info->id = gi->id;
  info->profileId = static_cast<unsigned int>(p.nvml_id);
  info->placement = {static_cast<unsigned int>(gi->instance.start),
                     static_cast<unsigned int>(p.memory_slices)};
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::GpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t instance, unsigned int profile,
    unsigned int engine_profile, nvmlComputeInstanceProfileInfo_t* info) {
  std::lock_guard lock(mu_);
  GpuInstance* gi = FindInstance(instance);
  if (gi == nullptr || profile >= std::size(kComputeSlices) ||
      engine_profile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const mig::Profile& p = gi->gpu->model->profiles[gi->instance.profile];
  if (kComputeSlices[profile] > static_cast<unsigned int>(p.compute_slices)) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  *info = {};
  info->id = profile;
  info->sliceCount = kComputeSlices[profile];
  info->instanceCount = p.compute_slices / kComputeSlices[profile];
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::GpuInstanceCreateComputeInstance(
    nvmlGpuInstance_t instance, unsigned int profile_id,
    nvmlComputeInstance_t* compute) {
  std::lock_guard lock(mu_);
  GpuInstance* gi = FindInstance(instance);
  if (gi == nullptr || profile_id >= std::size(kComputeSlices)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const mig::Profile& p = gi->gpu->model->profiles[gi->instance.profile];
  if (kComputeSlices[profile_id] !=
          static_cast<unsigned int>(p.compute_slices) ||
      !gi->computes.empty()) {
    return NVML_ERROR_INSUFFICIENT_RESOURCES;
  }
  if (nvmlReturn_t r = Change(); r != NVML_SUCCESS) return r;
  gi->computes.push_back(std::make_unique<ComputeInstance>(
      ComputeInstance{gi, static_cast<unsigned int>(gi->computes.size())}));
  *compute = reinterpret_cast<nvmlComputeInstance_t>(gi->computes.back().get());
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvml::GpuInstanceGetComputeInstances(
    nvmlGpuInstance_t instance, unsigned int profile_id,
    nvmlComputeInstance_t* computes, unsigned int* count) {
  std::lock_guard lock(mu_);
  GpuInstance* gi = FindInstance(instance);
  if (gi == nullptr || count == nullptr ||
      profile_id >= std::size(kComputeSlices)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  std::vector<nvmlComputeInstance_t> found;
  for (const auto& ci : gi->computes) {
    found.push_back(reinterpret_cast<nvmlComputeInstance_t>(ci.get()));
  }
  return CopyOut(found, computes, count);
}

nvmlReturn_t FakeNvml::ComputeInstanceDestroy(nvmlComputeInstance_t compute) {
  std::lock_guard lock(mu_);
  for (const auto& gpu : gpus_) {
    for (const auto& gi : gpu->instances) {
      auto it = std::find_if(
          gi->computes.begin(), gi->computes.end(), [&](const auto& ci) {
            return reinterpret_cast<nvmlComputeInstance_t>(ci.get()) == compute;
          });
      if (it == gi->computes.end()) continue;
      if (gi->in_use) return NVML_ERROR_IN_USE;
      if (nvmlReturn_t r = Change(); r != NVML_SUCCESS) return r;
      gi->computes.erase(it);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeNvml::DeviceGetComputeRunningProcesses(
    nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos) {
  std::lock_guard lock(mu_);
  Gpu* gpu = FindGpu(device);
  if (gpu == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<nvmlProcessInfo_t> found;
  for (const auto& gi : gpu->instances) {
    if (gi->in_use) found.push_back({1000 + gi->id, 1 << 30, gi->id, 0});
  }
  return CopyOut(found, infos, count);
}

nvmlReturn_t FakeNvml::GpuInstanceDestroy(nvmlGpuInstance_t instance) {
  std::lock_guard lock(mu_);
  GpuInstance* gi = FindInstance(instance);
  if (gi == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gi->in_use || !gi->computes.empty()) return NVML_ERROR_IN_USE;
  if (nvmlReturn_t r = Change(); r != NVML_SUCCESS) return r;
  auto& all = gi->gpu->instances;
  all.erase(std::find_if(all.begin(), all.end(),
                         [&](const auto& other) { return other.get() == gi; }));
  return NVML_SUCCESS;
}

}  // namespace migserve::agent
