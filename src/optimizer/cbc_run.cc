#include "optimizer/cbc_run.h"

#include <fmt/format.h>

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcSolver.hpp>

#include "optimizer/deadline.h"
#include "util/interrupt.h"

namespace migserve::optimizer {
namespace {

// Stops CBC at its next node once a stop was asked for, and says how the
// search goes at least every kProgressEveryS seconds.
class Watch : public CbcEventHandler {
 public:
  explicit Watch(CbcProgress progress)
      : progress_(std::move(progress)), begin_(Clock::now()) {}
  CbcAction event(CbcEvent) override {
    if (Interrupted()) return stop;
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
  Clock::time_point begin_;
  ProgressTimer due_;
};

}  // namespace

void StopWhenInterrupted(CbcModel* cbc, CbcProgress progress) {
  Watch handler(std::move(progress));
  cbc->passInEventHandler(&handler);
}

void RunCbcSolver(CbcModel* cbc, double seconds,
                  const std::vector<std::string>& arguments,
                  CbcProgress progress) {
  cbc->setLogLevel(0);  // CBC prints on stdout, which carries our output
  StopWhenInterrupted(cbc, std::move(progress));
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

}  // namespace migserve::optimizer
