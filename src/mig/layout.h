// Layout: the set of (profile, start) instances on one GPU, and the MIG rules
// that make one legal (DESIGN 2).
#ifndef MIGSERVE_MIG_LAYOUT_H_
#define MIGSERVE_MIG_LAYOUT_H_

#include <compare>
#include <string>
#include <vector>

#include "mig/gpu_model.h"

namespace migserve::mig {

// One GPU instance: a profile (index into GpuModel::profiles) at a start.
struct Instance {
  int profile = 0;
  int start = 0;
  auto operator<=>(const Instance&) const = default;
};

// A canonical (sorted by start, then profile) set of instances.
class Layout {
 public:
  Layout() = default;
  explicit Layout(std::vector<Instance> instances);

  const std::vector<Instance>& instances() const { return instances_; }
  size_t size() const { return instances_.size(); }
  bool empty() const { return instances_.empty(); }
  bool Contains(const Instance& instance) const;

  void Add(const Instance& instance);
  // Returns false if `instance` was not in the layout.
  bool Remove(const Instance& instance);

  // Returns how many instances of each profile the layout has, indexed like
  // GpuModel::profiles.
  std::vector<int> ProfileCounts(const GpuModel& model) const;

  // Returns e.g. "4g.40gb@0+2g.20gb@4+1g.10gb@6"; "(empty)" if empty.
  std::string ToString(const GpuModel& model) const;

  auto operator<=>(const Layout&) const = default;

 private:
  std::vector<Instance> instances_;
};

// Returns true if `a` and `b` share a memory slice.
bool Overlaps(const GpuModel& model, const Instance& a, const Instance& b);

// Returns true if `layout` is legal on `model` under `options`: every profile
// enabled and within its count limit, every start allowed, memory spans
// disjoint, compute slices within the total, and (with legacy_4g3g on a GPU
// that had the rule) no 4g beside a 3g. Otherwise returns false and, if `why`
// is not null, sets it to the first rule broken.
bool IsLegal(const GpuModel& model, const Layout& layout,
             const MigOptions& options, std::string* why = nullptr);

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_LAYOUT_H_
