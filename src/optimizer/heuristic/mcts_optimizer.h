// The paper's slow algorithm (5.3, Appendix A): Monte Carlo Tree Search over
// completion rates. A node is a completion state, an edge a GPU config; a
// node's children are the top-K configs by score among those that contain
// one of a few randomly chosen unsatisfied services; estimation is a
// randomized rollout through pools of good configs memoized per kind of
// completion state. Returns the shortest path (fewest GPUs) it found.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_MCTS_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_MCTS_OPTIMIZER_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "optimizer/heuristic/config_space.h"
#include "optimizer/optimizer.h"
#include "optimizer/solve_info.h"

namespace migserve::optimizer {

// Searches from `initial` and returns the configs of the shortest path
// found. The first rollout follows the best-scored config at every step
// (the greedy's choice), so the answer is never longer than that. Stops
// after options.mcts.iterations iterations or at `deadline`. Deterministic
// for a given `seed` unless the deadline cuts it short.
std::vector<deployment::GpuConfig> Mcts(
    const ConfigSpace& space, const deployment::CompletionRates& initial,
    const SolveOptions& options, uint64_t seed,
    std::chrono::steady_clock::time_point deadline, MctsInfo* stats);

class MctsOptimizer : public Optimizer {
 public:
  const char* name() const override { return "mcts"; }
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_MCTS_OPTIMIZER_H_
