// Mixed fleets: a workload that offers several GPU types with costs
// (`gpus: [{name, cost}]`). The exact optimizer picks how many GPUs of each
// type and what runs on them at the least total cost; the deployment names
// each GPU's model.
#ifndef MIGSERVE_OPTIMIZER_FLEET_H_
#define MIGSERVE_OPTIMIZER_FLEET_H_

#include "optimizer/registry.h"
#include "profile/profile_table.h"
#include "workload/workload.h"

namespace migserve::optimizer {

// Solves `workload` over its offers with the exact optimizer. The summary
// has the GPU count, status and seconds; the result's info.milp the cost,
// its bound and the GPUs of each type (written to the summary's extra). Returns
// InvalidArgument naming the workload and service if a service runs on none of
// the offered GPUs.
StatusOr<RunResult> RunFleet(const workload::Workload& workload,
                             const profile::ProfileTable& profiles,
                             const SolveOptions& options);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_FLEET_H_
