// The exact optimizer (DESIGN 5). Instances of one profile are
// interchangeable, so a deployment is determined by how many GPUs use each
// distinct maximal multiset (y_m) and how many instances of each profile each
// service gets (z_jp):
//   minimize  sum_m y_m   (sum_t cost_t sum_m y_tm for a mixed fleet)
//   s.t.      sum_j z_jp <= sum_m count_m(p) y_m       for every profile p
//             sum_p u_jp z_jp >= 1 - c_j                for every service j
//             y, z >= 0 integer
// solved with COIN-OR CBC. Service cuts (optimizer/service_cuts.h) make the
// LP strong; diving on them finds the incumbent (the greedy's deployment is
// an optional seed; each service on GPUs of its own is the start of last
// resort); when it meets the rounded-up cut bound, no search is needed.
#ifndef MIGSERVE_OPTIMIZER_MILP_MILP_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_MILP_MILP_OPTIMIZER_H_

#include <string>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/milp/lp_bounds.h"
#include "optimizer/optimizer.h"
#include "optimizer/options.h"
#include "optimizer/solve_info.h"

namespace migserve::optimizer::milp {

// Returns the bounds of the model from `initial` (0 if every service is
// satisfied).
LpBounds LpBound(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const MilpOptions& options);

class MilpOptimizer : public Optimizer {
 public:
  const char* name() const override { return "milp"; }

  // kOptimal when CBC proves optimality, kFeasible when it stopped within
  // MilpOptions::gap of the bound, kTimeLimit (with the best deployment
  // found, never worse than the seed's if there is one) otherwise; the time
  // limit covers the whole solve. Its info is a MilpInfo with best_bound
  // and gap.
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;

  bool PricesSpare(const SolveOptions& options) const override {
    return options.milp.spare;
  }
};

// One GPU type of a mixed fleet: its problem (the workload's services on
// that GPU) and its cost per GPU.
struct FleetType {
  const Problem* problem;
  double cost = 1;
};

struct FleetSolution {
  Outcome outcome = Outcome::kFeasible;
  std::vector<std::vector<deployment::GpuConfig>> configs;  // per type
  std::string reason;
  MilpInfo info;  // with cost, cost_bound (gpus_by_type: RunFleet)
};

// The exact model over several GPU types: y_m per type and multiset at the
// type's cost, z_jp per type, one demand row per service over all types;
// minimizes the total cost (the GPU count when costs are equal). Seeded, if
// MilpOptions::greedy_seed, with the cheapest single-type greedy fleet.
// REQUIRES: every type's problem has the same services in the same order.
FleetSolution SolveFleet(const std::vector<FleetType>& types,
                         const deployment::CompletionRates& initial,
                         const SolveOptions& options);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_MILP_OPTIMIZER_H_
