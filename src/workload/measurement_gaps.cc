#include "workload/measurement_gaps.h"

#include <fmt/format.h>

#include <set>

namespace migserve::workload {

std::vector<MeasurementGap> FindMeasurementGaps(
    const Workload& workload, const profile::ProfileTable& profiles,
    const mig::GpuModel& gpu) {
  std::vector<MeasurementGap> gaps;
  std::set<std::string> seen;
  for (const Service& s : workload.services) {
    if (!seen.insert(s.model).second) continue;
    if (!profiles.HasModel(s.model, gpu.name)) continue;
    MeasurementGap gap{s.model, {}};
    for (const mig::Profile& p : gpu.profiles) {
      if (!workload.mig.Enabled(p)) continue;
      if (!profiles.Measures(s.model, gpu.name, p.name)) {
        gap.profiles.push_back(p.name);
      }
    }
    if (!gap.profiles.empty()) gaps.push_back(std::move(gap));
  }
  return gaps;
}

}  // namespace migserve::workload
