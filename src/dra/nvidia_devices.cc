#include "dra/nvidia_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace migserve::dra {

std::string AttributeCel(std::string_view name) {
  return fmt::format("device.attributes['{}'].{}", kAttributeDomain, name);
}

std::string MigDeviceName(const mig::GpuModel& model, int minor,
                          const mig::Instance& instance) {
  const mig::Profile& profile = model.profiles[instance.profile];
  // The driver drops the dots, then makes the rest an RFC 1123 name.
  std::string bare;
  for (char c : profile.name) {
    if (c == '.') continue;
    unsigned char u = static_cast<unsigned char>(c);
    bare +=
        std::isalnum(u) || c == '-' ? static_cast<char>(std::tolower(u)) : '-';
  }
  return fmt::format("gpu-{}-mig-{}-{}-{}", minor, bare, profile.nvml_id,
                     instance.start);
}

std::vector<MigDevice> DynamicMigDevices(const mig::GpuModel& model,
                                         int minor) {
  std::vector<MigDevice> devices;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    for (int start : model.profiles[p].starts) {
      mig::Instance instance{static_cast<int>(p), start};
      devices.push_back(
          {MigDeviceName(model, minor, instance), minor, instance});
    }
  }
  std::sort(
      devices.begin(), devices.end(),
      [](const MigDevice& a, const MigDevice& b) { return a.name < b.name; });
  return devices;
}

}  // namespace migserve::dra
