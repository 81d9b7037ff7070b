#include "optimizer/optimizer.h"

namespace migserve::optimizer {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOptimal:
      return "optimal";
    case Outcome::kFeasible:
      return "feasible";
    case Outcome::kTimeLimit:
      return "time_limit";
    case Outcome::kInfeasible:
      return "infeasible";
  }
  return "?";
}

}  // namespace migserve::optimizer
