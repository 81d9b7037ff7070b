// The profiles a workload's models were never measured on: they are not
// used, and users should hear so once rather than wonder why a profile
// stays empty (issue 15).
#ifndef MIGSERVE_WORKLOAD_MEASUREMENT_GAPS_H_
#define MIGSERVE_WORKLOAD_MEASUREMENT_GAPS_H_

#include <string>
#include <vector>

#include "mig/gpu_model.h"
#include "profile/profile_table.h"
#include "workload/workload.h"

namespace migserve::workload {

struct MeasurementGap {
  std::string model;
  std::vector<std::string> profiles;  // enabled profiles of the GPU, in order
};

// For each model of `workload`'s services (once, in service order) that has
// rows for `gpu` but none for some of the profiles the workload may use on
// it, those profiles. Models without any row for `gpu` are not listed:
// CapacityMatrix::Build refuses them.
std::vector<MeasurementGap> FindMeasurementGaps(
    const Workload& workload, const profile::ProfileTable& profiles,
    const mig::GpuModel& gpu);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_MEASUREMENT_GAPS_H_
