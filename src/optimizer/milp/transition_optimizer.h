// Transition-aware optimization (`optimize --from`): among the deployments
// with the fewest GPUs, the one that the cluster reaches with the fewest
// replica starts, then the fewest repartitioned GPUs. A MILP solved by CBC
// in two phases. Phase 1 is the exact optimizer (milp_optimizer.h): the
// fewest GPUs G*. Phase 2 extends its model by the current GPUs:
//   k_g in {0,1}   keep current GPU g's layout (it then counts as a GPU)
//   x_r in {0,1}   keep replica r of a kept GPU (x_r <= k_g)
//   y_m, z_jp      as in phase 1: GPUs newly partitioned with multiset m,
//                  and replicas of service j started on profile p
//   sum_j z_jp <= sum_m count_m(p) y_m + sum_g (count_g(p) k_g - sum_{r on
//                 g of profile p} x_r)                     for every profile p
//   sum_p u_jp z_jp + sum_{r of j} u_r x_r >= 1            for every service j
//                 (u_r: what replica r is credited with, over j's rate)
//   sum_m y_m + sum_g k_g <= G* + extra_gpus
// and minimizes, lexicographically, the replica starts sum z, the GPUs and
// the repartitioned GPUs sum y (or a weighted sum of the three).
#ifndef MIGSERVE_OPTIMIZER_MILP_TRANSITION_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_MILP_TRANSITION_OPTIMIZER_H_

#include <optional>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/optimizer.h"
#include "util/status.h"

namespace migserve::optimizer::milp {

// Weights of a weighted objective instead of the lexicographic one.
struct TransitionWeights {
  double gpus = 0;
  double starts = 0;
  double repartitions = 0;
};

struct TransitionOptions {
  // GPUs above the fewest that the result may use when that saves starts.
  int extra_gpus = 0;
  // Minimize weights.gpus x GPUs + weights.starts x starts +
  // weights.repartitions x repartitioned GPUs (within the extra GPUs)
  // instead of starts, then GPUs, then repartitions.
  std::optional<TransitionWeights> weights;
  // Phase 2 (the fewest starts) ends once its best has not improved for
  // this many nodes (0: it runs to its node budget, MilpOptions::nodes). At
  // fleet scale its bound stays far below its answer, so only this ends it
  // early.
  int patience_nodes = 1000;
  // ... or for this many seconds (0: never; wall-clock, so an answer it
  // ends depends on the machine).
  double patience_s = 0;
  // Phase 2 runs CBC's cut generators: they prove the fewest starts (the
  // summary's starts_bound) and cost most of its time at fleet scale. Off,
  // a node costs milliseconds: an autoscaler's move, which needs a good
  // target soon and no proof, buys a deeper search with the same nodes.
  bool cuts = true;

  // Returns InvalidArgument naming the option that is out of range.
  Status Validate() const;
};

// What the cluster has to do to reach a deployment from the current one.
using TransitionCost = deployment::TransitionCost;

// A GPU of the current deployment: its layout, per instance the service whose
// replica there may be kept (kIdle: none, or one that cannot be kept), and
// the throughput that replica counts with if kept (req/s).
struct CurrentGpu {
  deployment::GpuConfig config;
  std::vector<double> throughput;
};

struct TransitionSolution {
  Outcome outcome = Outcome::kFeasible;  // kOptimal: both phases proven
  std::string reason;                    // when kInfeasible
  // The deployment; from[c] is the current GPU whose layout config c keeps
  // (and whose replicas on the same instances stay), -1 for a GPU that is
  // newly partitioned.
  std::vector<deployment::GpuConfig> configs;
  std::vector<int> from;
  // Per config and instance: true where a replica of the current GPU stays.
  std::vector<std::vector<bool>> kept;
  TransitionCost cost;  // as the model counts it
  Solution plain;       // phase 1: the fewest GPUs, regardless of the cluster
  double starts_bound = 0;  // proven lower bound on the starts
  int nodes = 0;            // phase 2's branch-and-bound nodes
  // survive: {domain: node} with SolveOptions::nodes: per config, the node
  // it must go to.
  std::vector<std::string> node_of;
};

// Returns the transition-aware deployment for `problem` from the `current`
// GPUs. Which replicas may be kept, and with what throughput, the caller
// decides. The time limit covers both phases; phase 1 gets half of it.
// With survive, phase 1 is SolveToSurvive's deployment and there is no
// phase 2: every config comes new, for the caller to place keeping what it
// can.
// REQUIRES: options are valid; the current layouts are of problem.gpu;
// for survive: {domain: node}, options.nodes are the cluster's.
TransitionSolution SolveTransition(const Problem& problem,
                                   const std::vector<CurrentGpu>& current,
                                   const SolveOptions& options,
                                   const TransitionOptions& transition);

// Phase 2 alone: the fewest starts from `current` among deployments of at
// most plain's GPUs (plus the extra ones), seeded with `plain`, phase 1's
// answer for `problem`, which the result keeps. The time limit is phase 2's.
// REQUIRES: as SolveTransition; plain is feasible.
TransitionSolution SolveTransitionFrom(const Problem& problem,
                                       const std::vector<CurrentGpu>& current,
                                       Solution plain,
                                       const SolveOptions& options,
                                       const TransitionOptions& transition);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_TRANSITION_OPTIMIZER_H_
