#include "mig/layout.h"

#include <fmt/format.h>

#include <algorithm>

namespace migserve::mig {
namespace {

std::string Name(const GpuModel& model, const Instance& instance) {
  return fmt::format("{}@{}", model.profiles[instance.profile].name,
                     instance.start);
}

bool Fail(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return false;
}

// The pre-R510 rule: the (4 compute, 4 memory) and (3 compute, 4 memory)
// profiles could not share a GPU.
bool IsFourSlice(const Profile& p) {
  return p.compute_slices == 4 && p.memory_slices == 4;
}
bool IsThreeSlice(const Profile& p) {
  return p.compute_slices == 3 && p.memory_slices == 4;
}

}  // namespace

Layout::Layout(std::vector<Instance> instances)
    : instances_(std::move(instances)) {
  std::sort(instances_.begin(), instances_.end(),
            [](const Instance& a, const Instance& b) {
              return std::tie(a.start, a.profile) <
                     std::tie(b.start, b.profile);
            });
}

bool Layout::Contains(const Instance& instance) const {
  return std::find(instances_.begin(), instances_.end(), instance) !=
         instances_.end();
}

void Layout::Add(const Instance& instance) {
  std::vector<Instance> next = instances_;
  next.push_back(instance);
  *this = Layout(std::move(next));
}

bool Layout::Remove(const Instance& instance) {
  auto it = std::find(instances_.begin(), instances_.end(), instance);
  if (it == instances_.end()) return false;
  instances_.erase(it);
  return true;
}

std::vector<int> Layout::ProfileCounts(const GpuModel& model) const {
  std::vector<int> counts(model.profiles.size(), 0);
  for (const Instance& i : instances_) ++counts[i.profile];
  return counts;
}

std::string Layout::ToString(const GpuModel& model) const {
  if (instances_.empty()) return "(empty)";
  std::string out;
  for (const Instance& i : instances_) {
    if (!out.empty()) out += "+";
    out += Name(model, i);
  }
  return out;
}

bool Overlaps(const GpuModel& model, const Instance& a, const Instance& b) {
  int a_end = a.start + model.profiles.at(a.profile).memory_slices;
  int b_end = b.start + model.profiles.at(b.profile).memory_slices;
  return a.start < b_end && b.start < a_end;
}

bool IsLegal(const GpuModel& model, const Layout& layout,
             const MigOptions& options, std::string* why) {
  std::vector<int> owner(model.memory_slices, -1);
  std::vector<int> counts(model.profiles.size(), 0);
  int compute = 0;
  bool has_four = false;
  bool has_three = false;
  const auto& instances = layout.instances();
  for (size_t k = 0; k < instances.size(); ++k) {
    const Instance& inst = instances[k];
    if (inst.profile < 0 ||
        inst.profile >= static_cast<int>(model.profiles.size())) {
      return Fail(why, fmt::format("profile index {} does not exist on {}",
                                   inst.profile, model.name));
    }
    const Profile& p = model.profiles[inst.profile];
    if (!options.Enabled(p)) {
      return Fail(why, fmt::format("profile {} is off unless optional "
                                   "profiles are enabled",
                                   p.name));
    }
    if (std::find(p.starts.begin(), p.starts.end(), inst.start) ==
        p.starts.end()) {
      return Fail(
          why, fmt::format("{} cannot start at {} (allowed starts: {})", p.name,
                           inst.start, fmt::join(p.starts, ", ")));
    }
    for (int s = inst.start; s < inst.start + p.memory_slices; ++s) {
      if (s >= model.memory_slices) {
        return Fail(why, fmt::format("{} runs past memory slice {}",
                                     Name(model, inst), model.memory_slices));
      }
      if (owner[s] >= 0) {
        return Fail(why, fmt::format("{} overlaps {} at memory slice {}",
                                     Name(model, inst),
                                     Name(model, instances[owner[s]]), s));
      }
      owner[s] = static_cast<int>(k);
    }
    if (p.max_count > 0 && ++counts[inst.profile] > p.max_count) {
      return Fail(why,
                  fmt::format("at most {} {} per GPU", p.max_count, p.name));
    }
    compute += p.compute_slices;
    has_four = has_four || IsFourSlice(p);
    has_three = has_three || IsThreeSlice(p);
  }
  if (compute > model.compute_slices) {
    return Fail(why, fmt::format("{} compute slices exceed the GPU's {}",
                                 compute, model.compute_slices));
  }
  if (options.legacy_4g3g && model.legacy_4g3g && has_four && has_three) {
    return Fail(why,
                "a 4g and a 3g instance together need driver R510 or later "
                "(legacy_4g3g is on)");
  }
  return true;
}

}  // namespace migserve::mig
