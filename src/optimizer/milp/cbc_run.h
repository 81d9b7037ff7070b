// Running CBC's standard solver (its presolve, cuts and heuristics, as the
// `cbc` command runs them) on a model, silently and within a time limit.
#ifndef MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_
#define MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_

#include <coin/CbcModel.hpp>
#include <coin/CglCutGenerator.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/milp/model_builder.h"

namespace migserve::optimizer::milp {

// Receives a line on CBC's search (time, nodes, best, bound) at least every
// kProgressEveryS seconds while it runs; may be empty.
using CbcProgress = std::function<void(const std::string&)>;

// How far one run of CBC may go. Nodes are the work limit: the same model
// and limits give the same answer on an idle machine and on a busy one.
// Seconds are the safety net: a run they end may differ from one to the next.
struct CbcLimits {
  double seconds = 0;  // wall clock; a run ends here whatever its nodes
  int nodes = 0;       // branch-and-bound nodes; 0: no limit but the seconds
  // Stop once the best solution has not improved for this many nodes (0:
  // never).
  int patience_nodes = 0;
  // Stop once it has not improved for this many seconds (0: never); an LP
  // solve, the root's included, then ends at that time too. Wall-clock: a
  // result it ends is not reproducible.
  double patience_s = 0;
};

// Runs CBC's standard solver on `cbc` within `limits`, with the further
// command-line `arguments` (e.g. {"-increment", "1"}); the answer stays in
// `cbc` (bestSolution, isProvenOptimal, getBestPossibleObjValue). Stops
// early when interrupted (util/interrupt.h).
void RunCbcSolver(CbcModel* cbc, const CbcLimits& limits,
                  const std::vector<std::string>& arguments = {},
                  CbcProgress progress = {});

// One run of CBC's standard solver on a loaded model: every MILP's way to
// CBC (the plain search's runs, the transition's phase 2).
struct CbcRunOptions {
  CbcLimits limits;
  std::vector<std::string> arguments;  // as RunCbcSolver takes them
  // The incumbent to start from and its objective; empty: none.
  std::vector<double> incumbent;
  double incumbent_cost = 0;
  CglCutGenerator* cuts = nullptr;  // at every node; not owned
  // Branching priorities per integer column (CbcModel's); empty: none.
  std::vector<int> priorities;
  CbcProgress progress;
};

// What a run found.
struct CbcAnswer {
  std::optional<std::vector<double>> best;  // the best solution, if any
  double objective = 0;                     // of `best`
  bool proven = false;                      // `best` is optimal
  // The seconds of the limits ended the run (not its nodes, patience or a
  // proof): the answer depends on the machine's speed.
  bool timed_out = false;
  double bound = 0;  // the best possible objective CBC proved
  int nodes = 0;
};

// Runs CBC's standard solver on a copy of `solver` (a loaded model) as `run`
// says.
CbcAnswer RunCbc(const OsiClpSolverInterface& solver, const CbcRunOptions& run);

// Makes `cbc` stop at its next node once interrupted (util/interrupt.h),
// or once its best has not improved for the patience of `limits`, and
// report to `progress`.
void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress = {},
                         const CbcLimits& limits = {});

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_
