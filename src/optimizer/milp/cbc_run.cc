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
// improved for the patience (in nodes, or in seconds), and says how the
// search goes at least every kProgressEveryS seconds.
class Watch : public CbcEventHandler {
 public:
  Watch(CbcProgress progress, const CbcLimits& limits)
      : progress_(std::move(progress)),
        limits_(limits),
        begin_(Clock::now()),
        improved_(begin_) {}
  CbcAction event(CbcEvent) override {
    if (Interrupted()) return stop;
    if (limits_.patience_nodes > 0 || limits_.patience_s > 0) {
      const CbcModel* m = getModel();
      double best =
          m->bestSolution() == nullptr ? COIN_DBL_MAX : m->getObjValue();
      if (best < best_) {
        best_ = best;
        improved_ = Clock::now();
        improved_node_ = m->getNodeCount();
      } else if ((limits_.patience_nodes > 0 &&
                  m->getNodeCount() - improved_node_ >=
                      limits_.patience_nodes) ||
                 (limits_.patience_s > 0 &&
                  SecondsSince(improved_) >= limits_.patience_s)) {
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
  CbcLimits limits_;
  Clock::time_point begin_;
  Clock::time_point improved_;
  int improved_node_ = 0;
  double best_ = COIN_DBL_MAX;
  ProgressTimer due_;
};

}  // namespace

void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress,
                         const CbcLimits& limits) {
  Watch handler(std::move(progress), limits);
  cbc->passInEventHandler(&handler);
}

void RunCbcSolver(CbcModel* cbc, const CbcLimits& limits,
                  const std::vector<std::string>& arguments,
                  CbcProgress progress) {
  cbc->setLogLevel(0);  // CBC prints on stdout, which carries our output
  StopWhenInterrupted(cbc, std::move(progress), limits);
  if (limits.patience_s > 0) {
    // CBC's events come between nodes: a long LP solve sees none.
    auto* clp = dynamic_cast<OsiClpSolverInterface*>(cbc->solver());
    if (clp != nullptr) {
      clp->getModelPtr()->setMaximumSeconds(
          std::min(limits.seconds, limits.patience_s));
    }
  }
  std::string time = std::to_string(limits.seconds);
  std::string nodes = std::to_string(limits.nodes);
  // CBC searches on one thread unless told: its answer within a node limit
  // is then the same run to run.
  std::vector<const char*> argv = {"migserve", "-log", "0",         "-slog",
                                   "0",        "-sec", time.c_str()};
  if (limits.nodes > 0) {
    argv.push_back("-maxNodes");
    argv.push_back(nodes.c_str());
  }
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
  RunCbcSolver(&cbc, run.limits, run.arguments, run.progress);
  CbcAnswer answer;
  answer.proven = cbc.isProvenOptimal();
  answer.timed_out = !answer.proven && cbc.isSecondsLimitReached();
  answer.bound = cbc.getBestPossibleObjValue();
  answer.nodes = cbc.getNodeCount();
  if (const double* best = cbc.bestSolution()) {
    answer.best.emplace(best, best + solver.getNumCols());
    answer.objective = cbc.getObjValue();
  }
  return answer;
}

}  // namespace migserve::optimizer::milp
