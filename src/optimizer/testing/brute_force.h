// A test oracle: the fewest GPUs for a small problem, by exhaustive search.
// It shares no code with the algorithms under test beyond the problem's
// maximal layouts.
#ifndef MIGSERVE_OPTIMIZER_TESTING_BRUTE_FORCE_H_
#define MIGSERVE_OPTIMIZER_TESTING_BRUTE_FORCE_H_

#include <vector>

#include "optimizer/milp/transition_optimizer.h"
#include "optimizer/problem.h"

namespace migserve::optimizer {

// Returns the optimum GPU count, or -1 if it exceeds `max_gpus`. Every
// multiset of n maximal layouts (n = 1, 2, ...) is tried; one is feasible if
// its instances, counted per profile, can be split among the services so
// that each gets its required throughput (instances of one profile are
// interchangeable, paper 5.2).
int BruteForceOptimum(const Problem& problem, int max_gpus);

// Returns the fewest replica starts of a deployment with at most `gpus` GPUs
// reached from `current` (as SolveTransition takes it), or -1 if
// there is none. Every choice is tried: which current GPUs keep their layout
// and how many of each kind of their replicas they keep, and every multiset
// of maximal layouts for the other GPUs; the starts are the fewest instances
// of the free ones that serve what the kept replicas leave.
int BruteForceFewestStarts(const Problem& problem,
                           const std::vector<milp::CurrentGpu>& current,
                           int gpus);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_TESTING_BRUTE_FORCE_H_
