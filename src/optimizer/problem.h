// What every optimizer solves (paper 5.1): the GPU model and its rules, the
// capacities of the services on its profiles, and its maximal layouts.
#ifndef MIGSERVE_OPTIMIZER_PROBLEM_H_
#define MIGSERVE_OPTIMIZER_PROBLEM_H_

#include <vector>

#include "mig/gpu_model.h"
#include "mig/layout.h"
#include "workload/capacity_matrix.h"
#include "workload/workload.h"

namespace migserve::optimizer {

// The most services one problem may have: the heuristics number each
// service and each pair of services as one int (ConfigSpace's groups),
// n (n + 1) / 2 of them, which fits up to 65,535 services. A larger
// workload is refused, not overflowed (it crashed the greedy at 200,000).
inline constexpr int kMaxServices = 65535;

struct Problem {
  // REQUIRES: the arguments outlive the problem; `caps` was built from
  // `workload` on `gpu`.
  Problem(const workload::Workload& workload, const mig::GpuModel& gpu,
          const workload::CapacityMatrix& caps);
  // A temporary would not outlive it (caps.WithRequired(...) passed here
  // left a dangling reference): refused at compile time.
  Problem(const workload::Workload&, const mig::GpuModel&,
          workload::CapacityMatrix&&) = delete;
  Problem(workload::Workload&&, const mig::GpuModel&,
          const workload::CapacityMatrix&) = delete;

  const workload::Workload& workload;
  const mig::GpuModel& gpu;
  mig::MigOptions mig;
  const workload::CapacityMatrix& caps;
  std::vector<mig::Layout> maximal_layouts;

  int num_services() const { return caps.num_services(); }
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_PROBLEM_H_
