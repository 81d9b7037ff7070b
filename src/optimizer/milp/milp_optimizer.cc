#include "optimizer/milp/milp_optimizer.h"

#include <cmath>

#include "optimizer/deadline.h"
#include "optimizer/heuristic/config_space.h"
#include "optimizer/heuristic/greedy_optimizer.h"
#include "optimizer/milp/mig_model.h"
#include "optimizer/milp/search.h"
#include "util/tolerance.h"

namespace migserve::optimizer::milp {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;

// Builds the model of `types` from `initial` (with survive's spare rows if
// `spare`), searches it from `seed` by
// the `deadline`, and records how long the seed (`seed_seconds`) and the
// model took.
ModelAnswer SolveTypes(std::vector<MigColumns> types,
                       const CompletionRates& initial, bool spare,
                       std::vector<std::vector<GpuConfig>> seed,
                       double seed_seconds, const SolveOptions& options,
                       Clock::time_point deadline, MigModel* model) {
  Clock::time_point phase = Clock::now();
  BuildMigModel(std::move(types), initial, spare, model);
  double model_seconds = SecondsSince(phase);
  ModelAnswer answer =
      MilpSearch(model, initial, options, deadline).Run(std::move(seed));
  answer.phases.seed = seed_seconds;
  answer.phases.model = model_seconds;
  return answer;
}

// The seed, if asked for: the cheapest fleet of one type that the greedy
// can build (per type; empty: none).
std::vector<std::vector<GpuConfig>> FleetSeed(
    const std::vector<FleetType>& types, const CompletionRates& initial,
    const SolveOptions& options) {
  std::vector<std::vector<GpuConfig>> seed;
  double seed_cost = 0;
  for (size_t t = 0; t < types.size() && options.milp.greedy_seed; ++t) {
    const Problem& p = *types[t].problem;
    bool serves_all = true;
    for (int j = 0; j < p.num_services(); ++j) {
      bool runs = false;
      for (int k = 0; k < p.caps.num_profiles(); ++k) {
        runs |= p.caps.utility(j, k) > 0;
      }
      serves_all &= runs || deployment::Satisfied(initial[j]);
    }
    if (!serves_all) continue;
    std::vector<GpuConfig> greedy =
        Greedy(ConfigSpace(p), initial, options.greedy);
    double cost = types[t].cost * static_cast<double>(greedy.size());
    if (seed.empty() || cost < seed_cost) {
      seed.assign(types.size(), {});
      seed[t] = std::move(greedy);
      seed_cost = cost;
    }
  }
  return seed;
}

}  // namespace

LpBounds LpBound(const Problem& problem, const CompletionRates& initial,
                 const MilpOptions& options) {
  MigModel model;
  BuildMigModel({MigColumns::Of(problem, 1, &initial)}, initial, options.spare,
                &model);
  return SolveRoot(ServiceColumnsOf(model, initial), options, &model);
}

Solution MilpOptimizer::Solve(const Problem& problem,
                              const CompletionRates& initial,
                              const SolveOptions& options) {
  // The time limit counts from here: the greedy seed (if any) and the
  // model are part of the solve.
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  Clock::time_point phase = Clock::now();
  std::vector<std::vector<GpuConfig>> seed;
  if (options.milp.greedy_seed) {
    seed.push_back(Greedy(ConfigSpace(problem), initial, options.greedy));
  }
  double seed_seconds = options.milp.greedy_seed ? SecondsSince(phase) : 0;
  MigModel model;
  ModelAnswer answer = SolveTypes({MigColumns::Of(problem, 1, &initial)},
                                  initial, options.milp.spare, std::move(seed),
                                  seed_seconds, options, deadline, &model);
  Solution solution;
  solution.configs = std::move(answer.configs.front());
  double bound = answer.optimal ? static_cast<double>(solution.configs.size())
                                : answer.bound;
  double lower = std::ceil(bound - kCostTolerance);
  solution.outcome = answer.outcome();
  MilpInfo info = answer.Info();
  info.best_bound = lower;
  info.gap = solution.configs.empty()
                 ? 0.0
                 : (solution.configs.size() - lower) / solution.configs.size();
  solution.info.milp = std::move(info);
  return solution;
}

FleetSolution SolveFleet(const std::vector<FleetType>& types,
                         const CompletionRates& initial,
                         const SolveOptions& options) {
  // The time limit counts from here: the greedy seed (if any) and the
  // model are part of the solve.
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  Clock::time_point phase = Clock::now();
  std::vector<std::vector<GpuConfig>> seed = FleetSeed(types, initial, options);
  double seed_seconds = options.milp.greedy_seed ? SecondsSince(phase) : 0;
  std::vector<MigColumns> columns;
  for (const FleetType& t : types) {
    columns.push_back(MigColumns::Of(*t.problem, t.cost, &initial));
  }
  MigModel model;
  ModelAnswer answer =
      SolveTypes(std::move(columns), initial, options.milp.spare,
                 std::move(seed), seed_seconds, options, deadline, &model);
  FleetSolution solution;
  if (answer.configs.empty()) {
    solution.outcome = Outcome::kInfeasible;
    solution.reason = "no fleet found within the time limit";
    return solution;
  }
  double cost = FleetCost(model, answer.configs);
  solution.outcome = answer.outcome();
  solution.configs = std::move(answer.configs);
  MilpInfo info = answer.Info();
  info.cost = cost;
  info.cost_bound = answer.optimal ? cost : answer.bound;
  solution.info = std::move(info);
  return solution;
}

}  // namespace migserve::optimizer::milp
