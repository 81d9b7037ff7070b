#include "optimizer/milp/cbc_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <coin/CbcEventHandler.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "optimizer/deadline.h"
#include "util/interrupt.h"

namespace migserve::optimizer::milp {
namespace {

// Stops CBC at its next node once a stop was asked for or its best has not
// improved for the patience, and says how the search goes at least every
// kProgressEveryS seconds.
class Watch : public CbcEventHandler {
 public:
  Watch(CbcProgress progress, double patience_s)
      : progress_(std::move(progress)),
        patience_s_(patience_s),
        begin_(Clock::now()),
        improved_(begin_) {}
  CbcAction event(CbcEvent) override {
    if (Interrupted()) return stop;
    if (patience_s_ > 0) {
      const CbcModel* m = getModel();
      double best =
          m->bestSolution() == nullptr ? COIN_DBL_MAX : m->getObjValue();
      if (best < best_) {
        best_ = best;
        improved_ = Clock::now();
      } else if (SecondsSince(improved_) >= patience_s_) {
        return stop;
      }
    }
    if (progress_ && due_.Due()) {
      const CbcModel* m = getModel();
      double best = m->getObjValue();
      progress_(fmt::format("CBC: {:.0f} s, {} nodes, best {}, bound {:g}",
                            SecondsSince(begin_), m->getNodeCount(),
                            m->bestSolution() == nullptr
                                ? std::string("none")
                                : fmt::format("{:g}", best),
                            m->getBestPossibleObjValue()));
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new Watch(*this); }

 private:
  CbcProgress progress_;
  double patience_s_;
  Clock::time_point begin_;
  Clock::time_point improved_;
  double best_ = COIN_DBL_MAX;
  ProgressTimer due_;
};

}  // namespace

void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress,
                         double patience_s) {
  Watch handler(std::move(progress), patience_s);
  cbc->passInEventHandler(&handler);
}

void RunCbcSolver(CbcModel* cbc, double seconds,
                  const std::vector<std::string>& arguments,
                  CbcProgress progress, double patience_s) {
  cbc->setLogLevel(0);  // CBC prints on stdout, which carries our output
  StopWhenInterrupted(cbc, std::move(progress), patience_s);
  if (patience_s > 0) {
    // CBC's events come between nodes: a long LP solve sees none.
    auto* clp = dynamic_cast<OsiClpSolverInterface*>(cbc->solver());
    if (clp != nullptr) {
      clp->getModelPtr()->setMaximumSeconds(std::min(seconds, patience_s));
    }
  }
  std::string time = std::to_string(seconds);
  std::vector<const char*> argv = {"migserve", "-log", "0",         "-slog",
                                   "0",        "-sec", time.c_str()};
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  argv.push_back("-solve");
  argv.push_back("-quit");
  CbcSolverUsefulData data;
  CbcMain0(*cbc, data);
  CbcMain1(
      static_cast<int>(argv.size()), argv.data(), *cbc,
      [](CbcModel*, int) { return 0; }, data);
}

CbcAnswer RunCbc(const OsiClpSolverInterface& solver,
                 const CbcRunOptions& run) {
  CbcModel cbc(solver);
  cbc.setLogLevel(0);  // CBC prints on stdout, which carries our output
  if (run.cuts != nullptr) cbc.addCutGenerator(run.cuts, 1, "service");
  if (!run.incumbent.empty()) {
    cbc.setBestSolution(run.incumbent.data(),
                        static_cast<int>(run.incumbent.size()),
                        run.incumbent_cost, true);
  }
  if (!run.priorities.empty()) {
    cbc.passInPriorities(run.priorities.data(), false);
  }
  RunCbcSolver(&cbc, run.seconds, run.arguments, run.progress, run.patience_s);
  CbcAnswer answer;
  answer.proven = cbc.isProvenOptimal();
  answer.bound = cbc.getBestPossibleObjValue();
  answer.nodes = cbc.getNodeCount();
  if (const double* best = cbc.bestSolution()) {
    answer.best.emplace(best, best + solver.getNumCols());
    answer.objective = cbc.getObjValue();
  }
  return answer;
}

CbcAnswer SolveModel(const ModelBuilder& model, double seconds,
                     const std::vector<std::string>& arguments) {
  OsiClpSolverInterface solver;
  model.Load(&solver);
  CbcRunOptions run;
  run.seconds = seconds;
  run.arguments = arguments;
  return RunCbc(solver, run);
}

}  // namespace migserve::optimizer::milp
