#include "mig/gpu_model.h"

#include <algorithm>

namespace migserve::mig {

bool GpuModel::Named(std::string_view n) const {
  return name == n ||
         std::find(aliases.begin(), aliases.end(), n) != aliases.end();
}

bool GpuModel::HasPciDeviceId(unsigned int id) const {
  constexpr unsigned int kNvidiaVendor = 0x10DE;
  if (id > 0xFFFF) {
    if ((id & 0xFFFF) != kNvidiaVendor) return false;
    id >>= 16;
  }
  return std::find(pci_device_ids.begin(), pci_device_ids.end(),
                   static_cast<int>(id)) != pci_device_ids.end();
}

int GpuModel::FindProfile(std::string_view name) const {
  // nvidia-smi prints "MIG 1g.10gb".
  if (name.substr(0, 4) == "MIG ") name.remove_prefix(4);
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].name == name) return static_cast<int>(i);
    for (const std::string& alias : profiles[i].aliases) {
      if (alias == name) return static_cast<int>(i);
    }
  }
  return -1;
}

int GpuModel::WholeProfile() const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].enabled_by_default &&
        profiles[i].compute_slices == compute_slices) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int GpuModel::SmallestProfileWithCompute(int compute) const {
  int best = -1;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const Profile& p = profiles[i];
    if (!p.enabled_by_default || p.compute_slices != compute) continue;
    if (best < 0 || p.memory_slices < profiles[best].memory_slices) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace migserve::mig
