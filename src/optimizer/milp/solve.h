// The way to a MILP solver for code that builds a model and wants its
// answer, naming no solver (HiGHS' facade: pass a model, run, read the
// solution). CBC answers inside; its types, headers and flags stay in
// optimizer/milp/.
#ifndef MIGSERVE_OPTIMIZER_MILP_SOLVE_H_
#define MIGSERVE_OPTIMIZER_MILP_SOLVE_H_

#include <vector>

#include "optimizer/milp/model_builder.h"

namespace migserve::optimizer::milp {

// How far a solve may go. Nodes are the work limit (the same model and
// limits give the same answer on an idle machine and a busy one); seconds
// the safety net.
struct SolveLimits {
  double seconds = 0;  // 0: none
  int nodes = 0;       // branch-and-bound nodes; 0: none
};

// How to solve.
struct SolveTuning {
  // Presolve the model first (tighter, faster; on small models it has
  // proven a worse choice optimal, so a caller may turn it off).
  bool presolve = true;
};

enum class SolveOutcome {
  kOptimal,     // values proven optimal
  kFeasible,    // values found, not proven: a limit ended the search
  kNoSolution,  // none found within the limits, or none exists
};

struct SolveAnswer {
  SolveOutcome outcome = SolveOutcome::kNoSolution;
  std::vector<double> values;  // per column; empty without a solution
  double objective = 0;        // of `values`
  double bound = 0;            // the best objective proven possible
  bool timed_out = false;      // the seconds ended it: machine-dependent
};

// Minimizes `model` within `limits`.
SolveAnswer Solve(const ModelBuilder& model, const SolveLimits& limits,
                  const SolveTuning& tuning = {});

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_SOLVE_H_
