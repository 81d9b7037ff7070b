// The paper's fast algorithm (5.3, Appendix A Figure "FastAlgo"): pick the
// GPU config with the highest heuristic score, update the completion rates,
// repeat until every service is satisfied. The config set starts with every
// config mixing at most two services; when a service is almost satisfied,
// configs that mix it with more services join the set.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_GREEDY_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_GREEDY_OPTIMIZER_H_

#include <memory>
#include <optional>
#include <vector>

#include "optimizer/deadline.h"
#include "optimizer/heuristic/config_space.h"
#include "optimizer/optimizer.h"

namespace migserve::optimizer {

// Returns the configs the greedy picks from `initial`, in order. Always
// succeeds: every service of a usable workload has a config of its own.
std::vector<deployment::GpuConfig> Greedy(
    const ConfigSpace& space, const deployment::CompletionRates& initial,
    const GreedyOptions& options);

// As Greedy, but returns nothing once `deadline` passes (or a stop is asked
// for) before every service is served.
std::optional<std::vector<deployment::GpuConfig>> GreedyUntil(
    const ConfigSpace& space, const deployment::CompletionRates& initial,
    const GreedyOptions& options, Clock::time_point deadline);

class GreedyOptimizer : public Optimizer {
 public:
  const char* name() const override { return "greedy"; }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_GREEDY_OPTIMIZER_H_
