// A test oracle: the fewest GPUs for a small problem, by exhaustive search.
// It shares no code with the algorithms under test beyond the problem's
// maximal layouts.
#ifndef MIGSERVE_OPTIMIZER_BRUTE_FORCE_H_
#define MIGSERVE_OPTIMIZER_BRUTE_FORCE_H_

#include "optimizer/problem.h"

namespace migserve::optimizer {

// Returns the optimum GPU count, or -1 if it exceeds `max_gpus`. Every
// multiset of n maximal layouts (n = 1, 2, ...) is tried; one is feasible if
// its instances, counted per profile, can be split among the services so
// that each gets its required throughput (instances of one profile are
// interchangeable, paper 5.2).
int BruteForceOptimum(const Problem& problem, int max_gpus);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_BRUTE_FORCE_H_
