// What a solve learned besides its deployment, as HiGHS's HighsInfo: typed
// statistics that each algorithm fills where it knows them. ToJson writes
// the ones that are set into a deployment summary's `extra`
// (docs/formats.md); nothing inside the optimizer reads them back as JSON.
#ifndef MIGSERVE_OPTIMIZER_SOLVE_INFO_H_
#define MIGSERVE_OPTIMIZER_SOLVE_INFO_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace migserve::optimizer {

// Where an exact solve's time went, in seconds.
struct MilpPhases {
  double seed = 0;       // the greedy seed, if asked for
  double model = 0;      // building the model
  double root = 0;       // the root LP and its service cuts
  double incumbent = 0;  // dives (and the one-service start)
  double search = 0;     // CBC's branch and bound
};

// The exact optimizer (milp, mixed fleets).
struct MilpInfo {
  double lp_bound = 0;   // the root LP relaxation
  double cut_bound = 0;  // the root LP with service cuts
  int nodes = 0;         // CBC's branch-and-bound nodes
  // What found the deployment: "seed", "dive", "cbc" or "one-service".
  std::string incumbent;
  MilpPhases phase_seconds;
  // One GPU type: the proven lower bound on GPUs and the relative gap.
  std::optional<double> best_bound;
  std::optional<double> gap;
  // Mixed fleets: the fleet's cost, its proven lower bound, GPUs per type.
  std::optional<double> cost;
  std::optional<double> cost_bound;
  std::map<std::string, int> gpus_by_type;
};

struct MctsInfo {
  int iterations = 0;
  int nodes = 0;
  int rollouts = 0;
  int pool_hits = 0;    // rollout steps served from a memoized pool
  int pool_misses = 0;  // rollout steps that had to score configs
};

// The genetic algorithm of two-phase.
struct GeneticInfo {
  int fast_gpus = 0;        // the first (fast) phase's GPU count
  std::vector<int> rounds;  // the best GPU count after each round
  // Why it stopped: "patience", "max_rounds", "time_limit", "interrupted".
  std::string stopped;
  int threads = 0;
};

struct ParvaGpuInfo {
  int gpus_before_optimization = 0;
};

// At most one member is set: that of the algorithm that solved.
struct SolveInfo {
  std::optional<MilpInfo> milp;
  std::optional<MctsInfo> mcts;
  std::optional<GeneticInfo> genetic;
  std::optional<ParvaGpuInfo> parvagpu;
};

// The summary's `extra`: the set member's fields by their names above.
nlohmann::json ToJson(const SolveInfo& info);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_SOLVE_INFO_H_
