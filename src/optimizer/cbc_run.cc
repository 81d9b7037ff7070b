#include "optimizer/cbc_run.h"

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcSolver.hpp>

#include "util/interrupt.h"

namespace migserve::optimizer {
namespace {

// Stops CBC at its next node once a stop was asked for.
class StopOnInterrupt : public CbcEventHandler {
 public:
  CbcAction event(CbcEvent) override { return Interrupted() ? stop : noAction; }
  CbcEventHandler* clone() const override { return new StopOnInterrupt(*this); }
};

}  // namespace

void StopWhenInterrupted(CbcModel* cbc) {
  StopOnInterrupt handler;
  cbc->passInEventHandler(&handler);
}

void RunCbcSolver(CbcModel* cbc, double seconds,
                  const std::vector<std::string>& arguments) {
  cbc->setLogLevel(0);  // CBC prints on stdout, which carries our output
  StopWhenInterrupted(cbc);
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
