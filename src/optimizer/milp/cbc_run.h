// Running CBC's standard solver (its presolve, cuts and heuristics, as the
// `cbc` command runs them) on a model, silently and within a time limit.
#ifndef MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_
#define MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_

#include <coin/CbcModel.hpp>
#include <functional>
#include <string>
#include <vector>

namespace migserve::optimizer::milp {

// Receives a line on CBC's search (time, nodes, best, bound) at least every
// kProgressEveryS seconds while it runs; may be empty.
using CbcProgress = std::function<void(const std::string&)>;

// Runs CBC's standard solver on `cbc` for at most `seconds`, with the further
// command-line `arguments` (e.g. {"-increment", "1"}); the answer stays in
// `cbc` (bestSolution, isProvenOptimal, getBestPossibleObjValue). Stops
// early when interrupted (util/interrupt.h), and with `patience_s` > 0 once
// its best solution has not improved for that long (an LP solve, the
// root's included, then ends at that time too).
void RunCbcSolver(CbcModel* cbc, double seconds,
                  const std::vector<std::string>& arguments = {},
                  CbcProgress progress = {}, double patience_s = 0);

// Makes `cbc` stop at its next node once interrupted (util/interrupt.h),
// or once its best has not improved for `patience_s` > 0 seconds, and
// report to `progress`.
void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress = {},
                         double patience_s = 0);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_
