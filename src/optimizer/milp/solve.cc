#include "optimizer/milp/solve.h"

#include <coin/OsiClpSolverInterface.hpp>
#include <string>
#include <utility>

#include "optimizer/milp/cbc_run.h"

namespace migserve::optimizer::milp {

SolveAnswer Solve(const ModelBuilder& model, const SolveLimits& limits,
                  const SolveTuning& tuning) {
  OsiClpSolverInterface solver;
  model.Load(&solver);
  CbcRunOptions run;
  run.limits.seconds = limits.seconds;
  run.limits.nodes = limits.nodes;
  if (!tuning.presolve) run.arguments = {"-preprocess", "off"};
  CbcAnswer cbc = RunCbc(solver, run);
  SolveAnswer answer;
  answer.bound = cbc.bound;
  answer.timed_out = cbc.timed_out;
  if (cbc.best) {
    answer.outcome =
        cbc.proven ? SolveOutcome::kOptimal : SolveOutcome::kFeasible;
    answer.values = std::move(*cbc.best);
    answer.objective = cbc.objective;
  }
  return answer;
}

}  // namespace migserve::optimizer::milp
