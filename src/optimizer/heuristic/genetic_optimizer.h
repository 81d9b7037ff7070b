// The paper's optimizer (5.2): a fast algorithm gives a first deployment,
// then a genetic algorithm improves it. A chromosome is a deployment and its
// genes are GPU configs. Crossover erases random GPU configs and refills the
// missing completion with the slow algorithm; mutation swaps the services of
// random same-size instance pairs on different GPUs. Each round keeps the
// best deployments (the best never gets worse); the GA stops after
// `patience` rounds without improvement or at the time limit. The
// population's children are made on all cores.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_GENETIC_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_GENETIC_OPTIMIZER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "optimizer/heuristic/config_space.h"
#include "optimizer/optimizer.h"

namespace migserve::optimizer {

// An optimizer procedure on a shared config space: configs that bring
// `rates` to 100%.
using FastAlgorithm = std::function<std::vector<deployment::GpuConfig>(
    const ConfigSpace& space, const deployment::CompletionRates& rates,
    const SolveOptions& options)>;
using SlowAlgorithm = std::function<std::vector<deployment::GpuConfig>(
    const ConfigSpace& space, const deployment::CompletionRates& rates,
    const SolveOptions& options, uint64_t seed,
    std::chrono::steady_clock::time_point deadline)>;

// Returns the paper's pair: the heuristic greedy and MCTS.
FastAlgorithm GreedyAlgorithm();
SlowAlgorithm MctsAlgorithm();

// Returns the exact optimizer as a slow algorithm: it refills the erased
// GPUs optimally (within the time left).
SlowAlgorithm MilpAlgorithm();

// Returns the slow algorithm that `options.genetic.slow` names at each call
// ("mcts" or "milp").
SlowAlgorithm ChosenSlowAlgorithm();

class TwoPhaseOptimizer : public Optimizer {
 public:
  TwoPhaseOptimizer(FastAlgorithm fast, SlowAlgorithm slow)
      : fast_(std::move(fast)), slow_(std::move(slow)) {}

  const char* name() const override { return "two-phase"; }

  // Its info is a GeneticInfo (optimizer/solve_info.h).
  Solution Solve(const Problem& problem,
                 const deployment::CompletionRates& initial,
                 const SolveOptions& options) override;

 private:
  FastAlgorithm fast_;
  SlowAlgorithm slow_;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_GENETIC_OPTIMIZER_H_
