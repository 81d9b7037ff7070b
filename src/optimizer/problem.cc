#include "optimizer/problem.h"

#include "mig/layout_enumerator.h"

namespace migserve::optimizer {

Problem::Problem(const workload::Workload& workload, const mig::GpuModel& gpu,
                 const workload::CapacityMatrix& caps)
    : workload(workload),
      gpu(gpu),
      mig(workload.mig),
      caps(caps),
      maximal_layouts(mig::MaximalLayouts(gpu, workload.mig)) {}

}  // namespace migserve::optimizer
