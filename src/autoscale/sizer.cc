#include "autoscale/sizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "boundary/number.h"
#include "boundary/quantity.h"
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

StatusOr<Sizer::Sized> Sizer::Size(const std::vector<double>& rates) const {
  workload::Workload w = *workload_;
  // A service at no traffic (a rate of 0, or a trace's tiny rate) keeps
  // the workload's least rate: sized for nothing, it would get no replica,
  // below the floor of one every deployment gives a service.
  for (size_t s = 0; s < rates.size(); ++s) {
    MIGSERVE_ASSIGN_OR_RETURN(w.services[s].throughput,
                              Rate::Of(std::max(rates[s], kRateRange.min)));
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::CapacityMatrix caps,
      workload::CapacityMatrix::Build(w, *profiles_, *gpu_));
  const int needs = workload::CeilGpus(workload::RelaxedBound(caps, *gpu_));
  return Sized{std::move(w), std::move(caps), needs};
}

optimizer::SolveOptions Sizer::MoveOptions() const {
  optimizer::SolveOptions move = options_.solve;
  move.time_limit_s = options_.move_time_limit_s;
  move.milp.nodes = options_.move_nodes;
  return move;
}

StatusOr<deployment::Deployment> Sizer::Solve(
    const Sized& sized, const cluster::ClusterState* current,
    const optimizer::SolveOptions& solve, int max_gpus_held) const {
  if (sized.needs > solve.max_gpus) {
    return Status::FailedPrecondition(
        fmt::format("the rates need at least {} GPUs, more than the limit "
                    "of {}",
                    sized.needs, solve.max_gpus));
  }
  optimizer::Problem problem(sized.workload, *gpu_, sized.caps);
  if (current != nullptr) {
    // A move needs a good target soon, not a proof of its fewest starts.
    optimizer::milp::TransitionOptions fast;
    fast.cuts = false;
    return controller::OptimizeFromCurrent(
        *current, problem, *profiles_, solve, fast,
        {options_.gpus_per_node, max_gpus_held});
  }
  MIGSERVE_ASSIGN_OR_RETURN(auto milp, optimizer::MakeOptimizer("milp"));
  optimizer::RunResult run = optimizer::RunOptimizer(*milp, problem, solve);
  if (run.outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition("no deployment: " + run.reason);
  }
  return run.deployment;
}

StatusOr<deployment::Deployment> Sizer::Deploy(
    const std::vector<double>& rates,
    const cluster::ClusterState* current) const {
  MIGSERVE_ASSIGN_OR_RETURN(Sized sized, Size(rates));
  return Solve(sized, current,
               current != nullptr ? MoveOptions() : options_.solve, 0);
}

StatusOr<Sizer::Move> Sizer::DeployWithin(const std::vector<double>& rates,
                                          const cluster::ClusterState& current,
                                          int max_gpus, bool at_ceiling) const {
  if (max_gpus <= 0) max_gpus = options_.solve.max_gpus;
  // The move to `sized` (the rates `at`), or in `over` why it does not fit.
  auto move_to = [&](const Sized& sized, const std::vector<double>& at,
                     const optimizer::SolveOptions& solve) -> StatusOr<Move> {
    Move move{{}, at, "", false};
    if (sized.needs > max_gpus) {
      move.over = fmt::format("the rates need at least {} GPUs", sized.needs);
      return move;
    }
    MIGSERVE_ASSIGN_OR_RETURN(move.target,
                              Solve(sized, &current, solve, max_gpus));
    if (int held = controller::GpusHeld(current, move.target);
        held > max_gpus) {
      move.over = fmt::format("{} -> {} GPUs, {} held while the move runs",
                              current.UsedGpus(), move.target.UsedGpus(), held);
    }
    return move;
  };
  // A rate past the most a rate may be (boundary/quantity.h) needs more
  // than any budget: not sized, held as a move over the budget is.
  std::string past;
  for (size_t s = 0; s < rates.size() && past.empty(); ++s) {
    if (rates[s] > Rate::kRange.max) {
      past = fmt::format(
          "{} at {:.6g} req/s is past the most a rate may be "
          "({:g} req/s)",
          workload_->services[s].name, rates[s], Rate::kRange.max);
    }
  }
  std::optional<Sized> asked;
  if (past.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(asked, Size(rates));
  }
  auto ask = [&]() -> StatusOr<Move> {
    if (!asked) return Move{{}, rates, past, false};
    return move_to(*asked, rates, MoveOptions());
  };
  // Near the budget a move goes to the ceiling while it still has room to:
  // from there no move up is needed, and one from a cluster at the budget
  // would have no room for its temporary replicas. The rates' lower bound
  // may tell before any search.
  auto high = [&](const Move& move) {
    return !move.over.empty() ||
           move.target.UsedGpus() > options_.ceiling_above * max_gpus;
  };
  if (options_.ceiling.empty()) return ask();
  std::optional<Move> move;
  if (asked && asked->needs <= options_.ceiling_above * max_gpus) {
    MIGSERVE_ASSIGN_OR_RETURN(move, ask());
    if (!high(*move)) return *move;
  }
  if (at_ceiling) return Move{{}, rates, "held at the ceiling", true};
  // The ceiling's fewest GPUs are the budget's: the move's search gets the
  // limits a plain search gets to find them.
  MIGSERVE_ASSIGN_OR_RETURN(Sized peaks, Size(options_.ceiling));
  MIGSERVE_ASSIGN_OR_RETURN(Move up,
                            move_to(peaks, options_.ceiling, options_.solve));
  if (up.over.empty()) {
    up.to_ceiling = true;
    return up;
  }
  if (!move) {
    MIGSERVE_ASSIGN_OR_RETURN(move, ask());
  }
  return *move;
}

}  // namespace migserve::autoscale
