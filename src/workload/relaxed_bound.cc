#include "workload/relaxed_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/tolerance.h"

namespace migserve::workload {

double RelaxedBound(const CapacityMatrix& caps, const mig::GpuModel& gpu,
                    const std::vector<double>& completion) {
  double slices = 0;
  for (int j = 0; j < caps.num_services(); ++j) {
    double missing = 1.0 - (completion.empty() ? 0.0 : completion[j]);
    if (missing <= 0) continue;
    double best_per_slice = 0;
    for (int p = 0; p < caps.num_profiles(); ++p) {
      best_per_slice = std::max(
          best_per_slice, caps.utility(j, p) / gpu.profiles[p].compute_slices);
    }
    slices += missing / best_per_slice;
  }
  return slices / gpu.compute_slices;
}

int CeilGpus(double value) {
  double gpus = std::ceil(value - kRoundingTolerance);
  if (!(gpus < std::numeric_limits<int>::max())) {
    return std::numeric_limits<int>::max();
  }
  return static_cast<int>(gpus);
}

}  // namespace migserve::workload
