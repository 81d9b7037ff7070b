// The options of the paper's algorithms. The paper's rules (top-K = 10,
// 5 random unsatisfied services, 10 rounds without improvement, ...) are
// the defaults; each is an option.
#ifndef MIGSERVE_OPTIMIZER_OPTIONS_H_
#define MIGSERVE_OPTIMIZER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "deployment/gpu_config.h"
#include "util/status.h"

namespace migserve::optimizer {

// How a config's utility counts toward the heuristic score (paper 5.3).
struct ScoreRule {
  // The paper's score is sum_i (1 - c_i) * u_i over unsatisfied services.
  // With `cap_utility`, u_i counts only up to what service i still misses,
  // min(u_i, 1 - c_i), so a config is not rewarded for throughput nobody
  // needs (without it, a GPU full of a small service scores highest).
  bool cap_utility = true;

  // Returns one service's term of the score.
  double Term(double rate, double utility) const {
    if (deployment::Satisfied(rate) || utility <= 0) return 0;
    double missing = 1.0 - rate;
    return missing * (cap_utility && utility > missing ? missing : utility);
  }
};

struct GreedyOptions {
  ScoreRule score;
  // Mix an almost-satisfied service with more than one other service.
  bool mix_more = true;
  // A service is almost satisfied when what it still misses is at most this
  // many times the utility of its best one-service GPU config: at 1.0 (the
  // default) it can no longer fill a GPU of its own, which is when the paper
  // says two services stop saturating a GPU.
  double almost_satisfied = 1.0;
};

struct MctsOptions {
  int top_k = 10;            // children per node (paper: K = 10)
  int sample_services = 5;   // random unsatisfied services per node (paper: 5)
  int iterations = 400;      // tree iterations per search
  double exploration = 0.4;  // UCT constant; rewards are scaled to [0, 1]
  // Estimation: a pool of good configs is memoized per kind of completion
  // state; a kind rounds each service's missing share to 1/`resolution` of
  // its best one-service GPU, up to `max_bucket`.
  int pool_size = 10;
  // A rollout step takes the pool's best-scoring config here with this
  // probability, else a random one of the pool that still helps.
  double rollout_best = 0.5;
  int resolution = 1;
  int max_bucket = 2;

  // Returns InvalidArgument naming the first option out of its range.
  Status Validate() const;
};

struct GeneticOptions {
  int population = 8;             // deployments kept each round
  int offspring = 2;              // children per deployment per round
  int patience = 10;              // stop after this many rounds w/o progress
  int max_rounds = 0;             // 0: no limit but patience and time
  double erase_fraction = 0.15;   // crossover erases 1..this share of GPUs
  double mutate_fraction = 0.05;  // mutation swaps up to this share of GPUs
  bool prune = true;
  double focus = 0.5;  // drop GPUs a child no longer needs (not in the paper)
  // The slow algorithm that refills erased GPUs: "mcts" (the paper's) or
  // "milp" (the exact optimizer on the erased part).
  std::string slow = "mcts";

  // Returns InvalidArgument naming the first option out of its range.
  Status Validate() const;
};

// The exact optimizer's search (optimizer/milp/service_cuts.h).
struct MilpOptions {
  // Seed CBC with the greedy's deployment. Off (the default), the dives find
  // the incumbent: at fleet scale the greedy alone takes longer than the
  // whole exact solve.
  bool greedy_seed = false;
  int cut_rounds = 200;  // rounds of service cuts per LP
  int dives = 10;        // dives for an incumbent, within a quarter of the time
  int dive_patience = 3;  // stop diving after this many in a row find no better
  // Services a dive leaves to CBC with the layouts (none under survive's
  // spare rows, whose binaries make that slow).
  int dive_free = 3;
  // Stop once the best deployment is within this share of the proven bound
  // (status "feasible", with the gap in the summary); 0: prove optimality.
  // 1e-4 is the relative MIP gap HiGHS, Gurobi and CPLEX stop at by
  // default; below 10,000 GPUs it asks for a proof, since one GPU is more.
  double gap = 1e-4;
  // Alternate CBC's standard solver with runs that add service cuts at
  // every node.
  bool tree_cuts = true;
  // With survive, price each service's spare in the model (a loss takes at
  // least its largest instance) instead of only by rounds of raised rates.
  bool spare = true;
  // The work limit: CBC branch-and-bound nodes one solve may spend over its
  // runs (a dive's last search gets a tenth). The same inputs then give the
  // same deployment on an idle machine and a busy one; the time limit stays
  // as a safety net (status time_limit when it, not the nodes, ended a
  // search). 0: no limit but the time.
  int nodes = 20000;

  // Returns InvalidArgument naming the first option out of its range.
  Status Validate() const;
};

// A node of the fleet a deployment is placed on (`optimize --inventory`,
// or the cluster of `optimize --from`): the failure domains of `survive:
// {domain: node}`.
struct FleetNode {
  std::string name;
  int gpus = 0;  // of the workload's GPU model, or of `model`
  // A node to add (--from): used only for what the others cannot hold.
  bool spare = false;
  // A mixed fleet's node: its GPUs' model (mig::GpuModel::name).
  std::string model = {};
};

struct SolveOptions {
  double time_limit_s = 60;
  uint64_t seed = 1;
  int threads = 0;  // 0: every core
  // A workload whose lower bound needs more GPUs than this is refused
  // before any search: a mistyped throughput (1e9 for 1e3) would otherwise
  // produce a deployment of a million GPUs.
  int max_gpus = 100000;
  GreedyOptions greedy;
  MctsOptions mcts;
  GeneticOptions genetic;
  MilpOptions milp;
  // The fleet's nodes, in inventory order; empty: an unplaced deployment,
  // on nodes of deployment::kUnplacedGpusPerNode in deployment order.
  std::vector<FleetNode> nodes;
  // Receives one line of progress at a time (stderr in the CLI); may be
  // empty.
  std::function<void(const std::string&)> progress;

  // Returns InvalidArgument naming the first option out of its range (the
  // optimizers' entry points, RunOptimizer and RunFleet, check it).
  Status Validate() const;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_OPTIONS_H_
