#include "profile/model_class.h"

#include <map>
#include <utility>

#include "util/enum_names.h"

namespace migserve::profile {

namespace {

constexpr EnumName<Scaling> kScalingNames[] = {
    {Scaling::kSubLinear, "sub-linear"},
    {Scaling::kLinear, "linear"},
    {Scaling::kSuperLinear, "super-linear"}};

}  // namespace

const char* ScalingName(Scaling s) { return NameOf(kScalingNames, s).data(); }

std::vector<ModelClass> ClassifyModels(const ProfileTable& table,
                                       const mig::GpuModel& gpu) {
  int whole = gpu.WholeProfile();
  // (model, batch) -> rows with one process on enabled profiles that fit.
  std::map<std::pair<std::string, int>, std::vector<const ProfileRow*>> rows;
  for (const ProfileRow& row : table.rows) {
    if (row.gpu != gpu.name || row.procs != 1 || row.throughput <= 0) continue;
    int p = gpu.FindProfile(row.profile);
    if (p < 0 || !gpu.profiles[p].enabled_by_default) continue;
    if (row.memory_gb && *row.memory_gb > gpu.profiles[p].memory_gb) continue;
    rows[{row.model, row.batch}].push_back(&row);
  }
  double scale = gpu.compute_slices / 7.0;
  std::vector<ModelClass> out;
  for (const auto& [key, points] : rows) {
    const ProfileRow* whole_row = nullptr;
    const ProfileRow* smallest = nullptr;
    int smallest_compute = gpu.compute_slices + 1;
    for (const ProfileRow* r : points) {
      int p = gpu.FindProfile(r->profile);
      int compute = gpu.profiles[p].compute_slices;
      if (p == whole) whole_row = r;
      if (compute < smallest_compute) {
        smallest_compute = compute;
        smallest = r;
      }
    }
    if (whole_row == nullptr || smallest == whole_row) continue;
    ModelClass c;
    c.model = key.first;
    c.batch = key.second;
    c.smallest_profile = smallest->profile;
    c.ratio = whole_row->throughput / (smallest->throughput / smallest_compute);
    if (c.ratio < kLinearLow * scale) {
      c.scaling = Scaling::kSubLinear;
    } else if (c.ratio > kLinearHigh * scale) {
      c.scaling = Scaling::kSuperLinear;
    } else {
      c.scaling = Scaling::kLinear;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace migserve::profile
