#include "optimizer/fleet.h"

#include <fmt/format.h>

#include <deque>

#include "mig/gpu_catalog.h"
#include "optimizer/deadline.h"
#include "optimizer/milp_optimizer.h"

namespace migserve::optimizer {

StatusOr<RunResult> RunFleet(const workload::Workload& workload,
                             const profile::ProfileTable& profiles,
                             const SolveOptions& options) {
  MIGSERVE_RETURN_IF_ERROR(options.Validate());
  if (workload.survive) {
    return Status::InvalidArgument(fmt::format(
        "{}: survive: mixed fleets do not model survive yet; plan each GPU "
        "type's services as a workload of one type",
        workload.source));
  }
  Clock::time_point begin = Clock::now();
  // Problems refer to their workload, GPU and matrix: keep them in place.
  std::deque<workload::Workload> workloads;
  std::deque<workload::CapacityMatrix> caps;
  std::deque<Problem> problems;
  std::vector<FleetType> types;
  std::vector<const mig::GpuModel*> gpus;
  for (const workload::GpuOffer& offer : workload.offers) {
    MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                              mig::GpuCatalog::Default().Find(offer.name));
    workloads.push_back(workload);
    workloads.back().gpu = offer.name;
    MIGSERVE_ASSIGN_OR_RETURN(workload::CapacityMatrix m,
                              workload::CapacityMatrix::Build(
                                  workloads.back(), profiles, *gpu, false));
    caps.push_back(std::move(m));
    problems.emplace_back(workloads.back(), *gpu, caps.back());
    types.push_back({&problems.back(), offer.cost});
    gpus.push_back(gpu);
  }
  for (size_t j = 0; j < workload.services.size(); ++j) {
    bool runs = false;
    for (const workload::CapacityMatrix& m : caps) {
      for (int p = 0; p < m.num_profiles(); ++p) runs |= m.throughput(j, p) > 0;
    }
    if (!runs) {
      const workload::Service& s = workload.services[j];
      return Status::InvalidArgument(fmt::format(
          "{}:{}: services[{}]: service '{}' runs on none of the offered GPUs "
          "within its SLO",
          workload.source, s.line, j, s.name));
    }
  }
  FleetSolution solution = SolveFleet(
      types, deployment::CompletionRates(workload.services.size(), 0.0),
      options);
  solution.outcome = Reported(solution.outcome);
  RunResult run;
  run.outcome = solution.outcome;
  run.reason = solution.reason;
  if (solution.outcome == Outcome::kInfeasible) return run;
  run.deployment.gpu = workload.gpu;
  run.deployment.services = workload.services;
  for (size_t t = 0; t < types.size(); ++t) {
    deployment::Deployment part = deployment::MakeDeployment(
        workloads[t], *gpus[t], caps[t], solution.configs[t]);
    for (deployment::DeployedGpu& g : part.gpus) {
      g.id = static_cast<int>(run.deployment.gpus.size());
      g.gpu = gpus[t]->name;
      run.deployment.gpus.push_back(std::move(g));
    }
    solution.info.gpus_by_type[gpus[t]->name] =
        static_cast<int>(solution.configs[t].size());
  }
  deployment::Summary summary;
  summary.algorithm = "milp";
  summary.gpus = static_cast<int>(run.deployment.gpus.size());
  summary.status = solution.outcome;
  summary.seconds = SecondsSince(begin);
  summary.router = workload.router;
  run.info.milp = std::move(solution.info);
  summary.extra = ToJson(run.info);
  run.deployment.summary = std::move(summary);
  return run;
}

}  // namespace migserve::optimizer
