// The search for the exact model's optimum (DESIGN 5): the root LP with
// service cuts, dives for an incumbent, a start of last resort, then CBC's
// standard solver alternating with runs that add service cuts at every
// node, until the best deployment is proven, within the gap, or out of
// nodes (the work limit; the time limit is a safety net). Never returns worse
// than the seed.
#ifndef MIGSERVE_OPTIMIZER_MILP_SEARCH_H_
#define MIGSERVE_OPTIMIZER_MILP_SEARCH_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/deadline.h"
#include "optimizer/milp/cbc_run.h"
#include "optimizer/milp/lp_bounds.h"
#include "optimizer/milp/mig_model.h"
#include "optimizer/optimizer.h"
#include "optimizer/options.h"

namespace migserve::optimizer::milp {

// Solves the root LP of `model` and strengthens it with service cuts.
LpBounds SolveRoot(const std::vector<ServiceColumns>& services,
                   const MilpOptions& options, MigModel* model);

// What a search found: per type its configs.
struct ModelAnswer {
  bool optimal = false;
  std::vector<std::vector<deployment::GpuConfig>> configs;
  LpBounds root;
  double bound = 0;  // on the objective
  int nodes = 0;
  // Stopped within the relative gap (MilpOptions::gap), not proven.
  bool close = false;
  // The time limit (the safety net), not the work limit, ended the search.
  bool timed_out = false;
  // What found the deployment: "seed", "dive", "cbc" or "one-service".
  std::string incumbent;
  MilpPhases phases;

  // Proven; within the gap or out of nodes; or stopped by the clock.
  Outcome outcome() const;
  // The statistics every solve reports.
  MilpInfo Info() const;
};

class MilpSearch {
 public:
  // `model` is not owned and outlives the search; `options` are the
  // solve's (milp's, the seed of the dives' randomness, progress), not
  // copied: they outlive it too.
  MilpSearch(MigModel* model, const deployment::CompletionRates& initial,
             const SolveOptions& options, Clock::time_point deadline);

  // Searches from `seed` (per type; empty: none).
  ModelAnswer Run(std::vector<std::vector<deployment::GpuConfig>> seed);

 private:
  // Keeps `x` if it is better than the best; says whether it was.
  bool Adopt(std::vector<double> x, double cost, const char* by);
  void Report(const std::string& what) const;
  // The cost a solution must beat to be an improvement.
  double Better() const;
  // The best meets the cut bound rounded up to whole GPUs.
  bool Proven() const;
  // The best is within the relative gap of the bound.
  bool Close() const;
  bool HaveBest() const;
  void Dives();
  void CbcRuns();
  // One run of CBC's standard solver from the best solution so far, within
  // `limits`, with `generator`'s cuts at every node (preprocessing off)
  // unless it is null.
  std::optional<std::pair<std::vector<double>, double>> RunFromBest(
      const CbcLimits& limits, CglCutGenerator* generator);

  MigModel* model_;
  const SolveOptions& options_;
  Clock::time_point deadline_;
  Clock::time_point begin_;
  std::vector<ServiceColumns> services_;
  std::vector<int> priorities_;  // layouts first: they decide the GPUs
  // With one cost for every GPU only a whole GPU better is an improvement,
  // and the cut bound rounded up to whole GPUs is a proof.
  bool one_cost_ = true;
  double cost_ = 1;
  std::vector<double> best_;
  double best_cost_;
  ModelAnswer answer_;
};

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_SEARCH_H_
