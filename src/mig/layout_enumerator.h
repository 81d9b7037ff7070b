// Enumerates the legal layouts of a GPU model.
#ifndef MIGSERVE_MIG_LAYOUT_ENUMERATOR_H_
#define MIGSERVE_MIG_LAYOUT_ENUMERATOR_H_

#include <vector>

#include "mig/gpu_model.h"
#include "mig/layout.h"

namespace migserve::mig {

// Returns every legal non-empty layout of `model` under `options`.
std::vector<Layout> LegalLayouts(const GpuModel& model,
                                 const MigOptions& options);

// Returns the legal layouts to which no enabled instance can be added.
std::vector<Layout> MaximalLayouts(const GpuModel& model,
                                   const MigOptions& options);

// Profile counts (indexed like GpuModel::profiles) of a layout, forgetting
// where the instances start.
using Multiset = std::vector<int>;

// Returns the distinct multisets of `layouts`, in first-seen order, and in
// `representative` (if not null) one layout of each.
std::vector<Multiset> DistinctMultisets(const GpuModel& model,
                                        const std::vector<Layout>& layouts,
                                        std::vector<Layout>* representative);

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_LAYOUT_ENUMERATOR_H_
