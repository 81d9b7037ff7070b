// The optimizer procedure (paper 5.1, 8): given capacities and completion
// rates, return GPU configs that bring every rate to >= 100%. Every
// algorithm implements this one interface.
#ifndef MIGSERVE_OPTIMIZER_OPTIMIZER_H_
#define MIGSERVE_OPTIMIZER_OPTIMIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deployment/deployment.h"
#include "deployment/gpu_config.h"
#include "optimizer/options.h"
#include "optimizer/problem.h"
#include "optimizer/solve_info.h"

namespace migserve::optimizer {

// What a solve found (HiGHS's model status): a result, not a failure; the
// status a deployment's summary reports (deployment::SolveStatusName names
// it).
using Outcome = deployment::SolveStatus;

struct Solution {
  Outcome outcome = Outcome::kFeasible;
  std::vector<deployment::GpuConfig> configs;
  std::string reason;  // why, when kInfeasible
  SolveInfo info;      // the algorithm's statistics
};

// `outcome` as the caller reports it: kInterrupted when a stop was asked for
// (util/interrupt.h) and the search still returned a deployment.
Outcome Reported(Outcome outcome);

// A kInfeasible solution saying why.
Solution Infeasible(std::string reason);

// The lower bound on `problem`'s GPUs that `solution` knows: the relaxed
// one, or a better one its algorithm proved (milp).
int ProvenLowerBound(const Problem& problem, const Solution& solution);

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // The --algo name.
  virtual const char* name() const = 0;

  // Returns configs whose utilities, added to `initial`, bring every
  // service to >= 1, or kInfeasible with a reason.
  // REQUIRES: initial.size() == problem.num_services().
  virtual Solution Solve(const Problem& problem,
                         const deployment::CompletionRates& initial,
                         const SolveOptions& options) = 0;

  // Whether it prices survive's spare in its own model under `options`
  // (SolveToSurvive then also tries without).
  virtual bool PricesSpare(const SolveOptions& /*options*/) const {
    return false;
  }
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_OPTIMIZER_H_
