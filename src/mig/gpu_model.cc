#include "mig/gpu_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>

namespace migserve::mig {
namespace {

// A profile name "[Nc.]Ng.Mgb[+x]" as its memory M and the rest.
struct Shape {
  std::string rest;  // the name with M removed: "1g.gb+me"
  double memory_gb = 0;
};

std::optional<Shape> ShapeOf(std::string_view name) {
  static const std::regex kShape(R"(^((?:\d+c\.)?\d+g\.)(\d+)(gb(?:\+.*)?)$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(name.begin(), name.end(), m, kShape)) {
    return std::nullopt;
  }
  // strtod, not stod: a digit string too long for a double is no shape to
  // match, not an exception (found by fuzz/profile_csv_fuzz.cc).
  double gb = std::strtod(m.str(2).c_str(), nullptr);
  if (!std::isfinite(gb)) return std::nullopt;
  return Shape{m.str(1) + m.str(3), gb};
}

}  // namespace

bool GpuModel::Named(std::string_view n) const {
  return name == n ||
         std::find(aliases.begin(), aliases.end(), n) != aliases.end() ||
         std::any_of(products.begin(), products.end(),
                     [&](const Product& p) { return p.name == n; });
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
  // Drivers round the memory differently ("7g.79gb" for 7g.80gb): the
  // profile of the same shape whose memory is within 10%, the closest.
  std::optional<Shape> wanted = ShapeOf(name);
  if (!wanted) return -1;
  int best = -1;
  double best_gap = 0.1 * wanted->memory_gb;
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::optional<Shape> shape = ShapeOf(profiles[i].name);
    if (!shape || shape->rest != wanted->rest) continue;
    double gap = std::abs(shape->memory_gb - wanted->memory_gb);
    if (gap <= best_gap) {
      best = static_cast<int>(i);
      best_gap = gap;
    }
  }
  return best;
}

StatusOr<std::string> GpuModel::CanonicalProfile(std::string_view name) const {
  int p = FindProfile(name);
  if (p >= 0) return profiles[p].name;
  std::vector<std::string> names;
  for (const Profile& known : profiles) names.push_back(known.name);
  return Status::NotFound(fmt::format("unknown profile '{}' on {} (known: {})",
                                      name, this->name,
                                      fmt::join(names, ", ")));
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

double GpuModel::ComputeShare(const Profile& profile) const {
  if (sms > 0 && profile.sms > 0) {
    return static_cast<double>(profile.sms) / sms;
  }
  return static_cast<double>(profile.compute_slices) / compute_slices;
}

}  // namespace migserve::mig
