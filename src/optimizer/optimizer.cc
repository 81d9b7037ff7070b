#include "optimizer/optimizer.h"

#include "util/interrupt.h"

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

}  // namespace migserve::optimizer
