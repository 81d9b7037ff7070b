#include "optimizer/optimizer.h"

#include <algorithm>
#include <cmath>

#include "util/interrupt.h"
#include "workload/relaxed_bound.h"

namespace migserve::optimizer {

Outcome Reported(Outcome outcome) {
  return Interrupted() && outcome != Outcome::kInfeasible
             ? Outcome::kInterrupted
             : outcome;
}

Solution Infeasible(std::string reason) {
  Solution s;
  s.outcome = Outcome::kInfeasible;
  s.reason = std::move(reason);
  return s;
}

int ProvenLowerBound(const Problem& problem, const Solution& solution) {
  int bound =
      workload::CeilGpus(workload::RelaxedBound(problem.caps, problem.gpu));
  if (solution.info.milp && solution.info.milp->best_bound) {
    bound = std::max(
        bound, static_cast<int>(std::lround(*solution.info.milp->best_bound)));
  }
  return bound;
}

}  // namespace migserve::optimizer
