#include "autoscale/sizer.h"

#include <fmt/format.h>

#include <set>

#include "controller/transition_target.h"
#include "mig/gpu_catalog.h"
#include "optimizer/problem.h"
#include "optimizer/registry.h"
#include "workload/capacity_matrix.h"
#include "workload/relaxed_bound.h"

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

namespace {

workload::Workload AtRates(const workload::Workload& workload,
                           const std::vector<double>& rates) {
  workload::Workload w = workload;
  for (size_t s = 0; s < rates.size(); ++s) w.services[s].throughput = rates[s];
  return w;
}

}  // namespace

StatusOr<int> Sizer::LowerBound(const std::vector<double>& rates) const {
  MIGSERVE_ASSIGN_OR_RETURN(workload::CapacityMatrix caps,
                            workload::CapacityMatrix::Build(
                                AtRates(*workload_, rates), *profiles_, *gpu_));
  return workload::CeilGpus(workload::RelaxedBound(caps, *gpu_));
}

StatusOr<deployment::Deployment> Sizer::Deploy(
    const std::vector<double>& rates,
    const cluster::ClusterState* current) const {
  workload::Workload w = AtRates(*workload_, rates);
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::CapacityMatrix caps,
      workload::CapacityMatrix::Build(w, *profiles_, *gpu_));
  int needs = workload::CeilGpus(workload::RelaxedBound(caps, *gpu_));
  if (needs > options_.solve.max_gpus) {
    return Status::FailedPrecondition(fmt::format(
        "the rates need at least {} GPUs, more than the limit of {}", needs,
        options_.solve.max_gpus));
  }
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

StatusOr<Sizer::Move> Sizer::DeployWithin(const std::vector<double>& rates,
                                          const cluster::ClusterState& current,
                                          int max_gpus) const {
  Move move;
  MIGSERVE_ASSIGN_OR_RETURN(int needs, LowerBound(rates));
  if (needs > max_gpus) {
    move.over = fmt::format("the rates need at least {} GPUs", needs);
    return move;
  }
  MIGSERVE_ASSIGN_OR_RETURN(move.target, Deploy(rates, &current));
  if (int held = GpusHeld(current, move.target); held > max_gpus) {
    move.over = fmt::format("{} -> {} GPUs, {} held while the move runs",
                            current.UsedGpus(), move.target.UsedGpus(), held);
  }
  return move;
}

int GpusHeld(const cluster::ClusterState& current,
             const deployment::Deployment& target) {
  std::set<cluster::GpuId> held;
  for (const cluster::GpuState& g : current.gpus) {
    if (g.HasReplica()) held.insert(g.id);
  }
  int unplaced = 0;
  for (const deployment::DeployedGpu& g : target.gpus) {
    if (!g.Serving()) continue;
    if (g.node && g.index) {
      held.insert({*g.node, *g.index});
    } else {
      ++unplaced;
    }
  }
  return static_cast<int>(held.size()) + unplaced;
}

}  // namespace migserve::autoscale
