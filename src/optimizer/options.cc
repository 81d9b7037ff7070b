#include "optimizer/options.h"

#include <fmt/format.h>

namespace migserve::optimizer {
namespace {

// InvalidArgument "NAME: must be WHAT, got VALUE" unless `ok`.
template <typename T>
Status Require(bool ok, const char* name, const char* what, T value) {
  if (ok) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("{}: must be {}, got {}", name, what, value));
}

}  // namespace

Status MctsOptions::Validate() const {
  MIGSERVE_RETURN_IF_ERROR(Require(top_k >= 1, "top_k", ">= 1", top_k));
  MIGSERVE_RETURN_IF_ERROR(Require(sample_services >= 1, "sample_services",
                                   ">= 1", sample_services));
  MIGSERVE_RETURN_IF_ERROR(
      Require(iterations >= 0, "iterations", ">= 0", iterations));
  MIGSERVE_RETURN_IF_ERROR(
      Require(pool_size >= 1, "pool_size", ">= 1", pool_size));
  MIGSERVE_RETURN_IF_ERROR(
      Require(resolution >= 1, "resolution", ">= 1", resolution));
  MIGSERVE_RETURN_IF_ERROR(
      Require(max_bucket >= 1, "max_bucket", ">= 1", max_bucket));
  return Require(rollout_best >= 0 && rollout_best <= 1, "rollout_best",
                 "in [0, 1]", rollout_best);
}

Status GeneticOptions::Validate() const {
  MIGSERVE_RETURN_IF_ERROR(
      Require(population >= 1, "population", ">= 1", population));
  MIGSERVE_RETURN_IF_ERROR(
      Require(offspring >= 1, "offspring", ">= 1", offspring));
  MIGSERVE_RETURN_IF_ERROR(
      Require(patience >= 1, "patience", ">= 1", patience));
  MIGSERVE_RETURN_IF_ERROR(
      Require(max_rounds >= 0, "max_rounds", ">= 0", max_rounds));
  MIGSERVE_RETURN_IF_ERROR(Require(erase_fraction > 0 && erase_fraction <= 1,
                                   "erase_fraction", "in (0, 1]",
                                   erase_fraction));
  MIGSERVE_RETURN_IF_ERROR(Require(mutate_fraction >= 0 && mutate_fraction <= 1,
                                   "mutate_fraction", "in [0, 1]",
                                   mutate_fraction));
  return Require(slow == "mcts" || slow == "milp", "slow", "mcts or milp",
                 slow);
}

Status MilpOptions::Validate() const {
  MIGSERVE_RETURN_IF_ERROR(
      Require(cut_rounds >= 0, "cut_rounds", ">= 0", cut_rounds));
  MIGSERVE_RETURN_IF_ERROR(Require(dives >= 0, "dives", ">= 0", dives));
  MIGSERVE_RETURN_IF_ERROR(
      Require(dive_patience >= 1, "dive_patience", ">= 1", dive_patience));
  MIGSERVE_RETURN_IF_ERROR(
      Require(dive_free >= 0, "dive_free", ">= 0", dive_free));
  MIGSERVE_RETURN_IF_ERROR(Require(nodes >= 0, "nodes", ">= 0", nodes));
  return Require(gap >= 0 && gap <= 1, "gap", "in [0, 1]", gap);
}

Status SolveOptions::Validate() const {
  MIGSERVE_RETURN_IF_ERROR(
      Require(time_limit_s >= 0, "time_limit_s", ">= 0", time_limit_s));
  MIGSERVE_RETURN_IF_ERROR(Require(threads >= 0, "threads", ">= 0", threads));
  MIGSERVE_RETURN_IF_ERROR(Require(max_gpus > 0, "max_gpus", "> 0", max_gpus));
  MIGSERVE_RETURN_IF_ERROR(Require(greedy.almost_satisfied >= 0,
                                   "almost_satisfied", ">= 0",
                                   greedy.almost_satisfied));
  MIGSERVE_RETURN_IF_ERROR(mcts.Validate());
  MIGSERVE_RETURN_IF_ERROR(genetic.Validate());
  return milp.Validate();
}

}  // namespace migserve::optimizer
