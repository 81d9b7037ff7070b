#include "optimizer/optimizer.h"

#include "util/interrupt.h"

namespace migserve::optimizer {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOptimal:
      return "optimal";
    case Outcome::kFeasible:
      return "feasible";
    case Outcome::kTimeLimit:
      return "time_limit";
    case Outcome::kInterrupted:
      return "interrupted";
    case Outcome::kInfeasible:
      return "infeasible";
  }
  return "?";
}

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
