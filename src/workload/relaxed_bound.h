// The paper's lower bound (section 7): ignore MIG's placement rules and let
// every service use fractions of its most cost-efficient instance.
#ifndef MIGSERVE_WORKLOAD_RELAXED_BOUND_H_
#define MIGSERVE_WORKLOAD_RELAXED_BOUND_H_

#include <vector>

#include "mig/gpu_model.h"
#include "workload/capacity_matrix.h"

namespace migserve::workload {

// Returns the fractional number of GPUs: the sum over services of the
// compute slices needed at the best throughput per compute slice, over the
// GPU's compute slices. `completion` (empty: all zero) is subtracted first.
double RelaxedBound(const CapacityMatrix& caps, const mig::GpuModel& gpu,
                    const std::vector<double>& completion = {});

// Returns the smallest integer >= `value`, forgiving rounding noise below
// kRoundingTolerance (so that 150.0000000001 GPUs is 150); the largest int
// for anything at or past it (a bound never wraps to a small count).
int CeilGpus(double value);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_RELAXED_BOUND_H_
