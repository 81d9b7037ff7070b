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

// Runs CBC's standard solver on `cbc` for at most `seconds`, with the further
// command-line `arguments` (e.g. {"-increment", "1"}); the answer stays in
// `cbc` (bestSolution, isProvenOptimal, getBestPossibleObjValue). Stops
// early when interrupted (util/interrupt.h), and with `patience_s` > 0 once
// its best solution has not improved for that long (an LP solve, the
// root's included, then ends at that time too).
void RunCbcSolver(CbcModel* cbc, double seconds,
                  const std::vector<std::string>& arguments = {},
                  CbcProgress progress = {}, double patience_s = 0);

// One run of CBC's standard solver on a loaded model: every MILP's way to
// CBC (the plain search's runs, the transition's phase 2).
struct CbcRunOptions {
  double seconds = 0;
  std::vector<std::string> arguments;  // as RunCbcSolver takes them
  // The incumbent to start from and its objective; empty: none.
  std::vector<double> incumbent;
  double incumbent_cost = 0;
  CglCutGenerator* cuts = nullptr;  // at every node; not owned
  // Branching priorities per integer column (CbcModel's); empty: none.
  std::vector<int> priorities;
  CbcProgress progress;
  double patience_s = 0;
};

// What a run found.
struct CbcAnswer {
  std::optional<std::vector<double>> best;  // the best solution, if any
  double objective = 0;                     // of `best`
  bool proven = false;                      // `best` is optimal
  double bound = 0;  // the best possible objective CBC proved
  int nodes = 0;
};

// Runs CBC's standard solver on a copy of `solver` (a loaded model) as `run`
// says.
CbcAnswer RunCbc(const OsiClpSolverInterface& solver, const CbcRunOptions& run);

// Solves `model` with CBC's standard solver within `seconds`, with CBC's
// further command-line `arguments`: the way to CBC for code that builds a
// model and wants its answer without touching a COIN type (HiGHS' pass a
// model, run, read the solution).
CbcAnswer SolveModel(const ModelBuilder& model, double seconds,
                     const std::vector<std::string>& arguments = {});

// Makes `cbc` stop at its next node once interrupted (util/interrupt.h),
// or once its best has not improved for `patience_s` > 0 seconds, and
// report to `progress`.
void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress = {},
                         double patience_s = 0);

}  // namespace migserve::optimizer::milp

#endif  // MIGSERVE_OPTIMIZER_MILP_CBC_RUN_H_
