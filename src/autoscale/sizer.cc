#include "autoscale/sizer.h"

#include "controller/transition_target.h"
#include "mig/gpu_catalog.h"
#include "optimizer/problem.h"
#include "optimizer/registry.h"
#include "workload/capacity_matrix.h"

namespace migserve::autoscale {

StatusOr<Sizer> Sizer::Make(const workload::Workload& workload,
                            const profile::ProfileTable& profiles,
                            const SizerOptions& options) {
  if (workload.offers.size() > 1) {
    return Status::InvalidArgument(
        "a workload of one GPU type only (this one offers several)");
  }
  MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                            mig::GpuCatalog::Default().Find(workload.gpu));
  return Sizer(workload, profiles, *gpu, options);
}

StatusOr<deployment::Deployment> Sizer::Deploy(
    const std::vector<double>& rates,
    const cluster::ClusterState* current) const {
  workload::Workload w = *workload_;
  for (size_t s = 0; s < rates.size(); ++s) w.services[s].throughput = rates[s];
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::CapacityMatrix caps,
      workload::CapacityMatrix::Build(w, *profiles_, *gpu_));
  optimizer::Problem problem(w, *gpu_, caps);
  if (current != nullptr) {
    optimizer::SolveOptions move = options_.solve;
    move.time_limit_s = options_.move_time_limit_s;
    return controller::OptimizeFromCurrent(*current, problem, *profiles_, move,
                                           {}, options_.gpus_per_node);
  }
  MIGSERVE_ASSIGN_OR_RETURN(auto milp, optimizer::MakeOptimizer("milp"));
  optimizer::RunResult run =
      optimizer::RunOptimizer(*milp, problem, options_.solve);
  if (run.outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition("no deployment: " + run.reason);
  }
  return run.deployment;
}

}  // namespace migserve::autoscale
