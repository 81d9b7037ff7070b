// The --algo names and the bounds, and running one algorithm into a
// deployment with its summary.
#ifndef MIGSERVE_OPTIMIZER_REGISTRY_H_
#define MIGSERVE_OPTIMIZER_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "deployment/deployment.h"
#include "optimizer/optimizer.h"
#include "util/status_or.h"

namespace migserve::optimizer {

// Returns the algorithm names, in the order `compare` shows them.
std::vector<std::string> AlgorithmNames();

// Returns the algorithm called `name`, or InvalidArgument listing the names.
StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(std::string_view name);

struct RunResult {
  Outcome outcome = Outcome::kFeasible;
  std::string reason;                 // when kInfeasible
  deployment::Deployment deployment;  // with its summary; empty if infeasible
  SolveInfo info;                     // the algorithm's statistics
};

// Returns the summary of `solution` of `problem` by `algorithm`: GPU
// count, status, a lower bound (the relaxed one, or a better one the
// algorithm proved), the seconds taken and the algorithm's statistics.
// REQUIRES: the solution is not kInfeasible.
deployment::Summary SummaryOf(const char* algorithm, const Problem& problem,
                              const Solution& solution, double seconds);
// The same for `gpus` GPUs that `algorithm` deployed for `workload` in
// `seconds`, ending `status`: the one place a summary is assembled. No lower
// bound, no statistics (the caller adds them).
deployment::Summary SummaryOf(const char* algorithm,
                              const workload::Workload& workload, int gpus,
                              deployment::SolveStatus status, double seconds);

// Solves `problem` from zero completion with `optimizer` and returns the
// deployment with its summary (SummaryOf); kInfeasible with the reason
// "invalid options: ..." if `options` do not validate.
RunResult RunOptimizer(Optimizer& optimizer, const Problem& problem,
                       const SolveOptions& options);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_REGISTRY_H_
