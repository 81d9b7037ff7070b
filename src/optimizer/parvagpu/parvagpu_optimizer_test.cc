#include "optimizer/parvagpu/parvagpu_optimizer.h"

#include <gtest/gtest.h>

#include <optional>

#include "deployment/validator.h"
#include "mig/gpu_catalog.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/registry.h"
#include "optimizer/testing/shipped_workload.h"
#include "profile/profile_csv.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::optimizer {
namespace {

using ParvaGpuTest = ShippedWorkloadTest;

// ParvaGPU's six scenarios: its published GPU counts (its repository's
// deployment/SLOn files), every answer a valid deployment, and the exact
// optimizer never worse.
TEST_F(ParvaGpuTest, ReproducesThePublishedCountsAndMilpMatchesOrBeats) {
  const int published[] = {2, 3, 5, 7, 13, 16};
  for (int n = 1; n <= 6; ++n) {
    Load("parva-slo" + std::to_string(n));
    ParvaGpuOptimizer parva;
    RunResult run = RunOptimizer(parva, *problem_, SolveOptions{});
    ASSERT_EQ(run.outcome, Outcome::kFeasible) << n << ": " << run.reason;
    EXPECT_EQ(static_cast<int>(run.deployment.gpus.size()), published[n - 1])
        << "SLO" << n;
    auto report =
        deployment::Validate(run.deployment, workload_, profiles_, gpu_);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok()) << "SLO" << n;
    milp::MilpOptimizer milp;
    RunResult exact = RunOptimizer(milp, *problem_, SolveOptions{});
    EXPECT_LE(exact.deployment.gpus.size(), run.deployment.gpus.size())
        << "SLO" << n;
  }
}

// Its optimization step moves the segments of lightly used GPUs into the
// gaps of others: SLO6 needs more GPUs before it.
TEST_F(ParvaGpuTest, OptimizationStepFreesGpus) {
  Load("parva-slo6");
  Solution s = ParvaGpuOptimizer().Solve(
      *problem_, deployment::CompletionRates(workload_.services.size(), 0.0),
      {});
  ASSERT_EQ(s.outcome, Outcome::kFeasible);
  ASSERT_TRUE(s.info.parvagpu.has_value());
  EXPECT_GT(s.info.parvagpu->gpus_before_optimization,
            static_cast<int>(s.configs.size()));
}

// --time-limit 0: the optimization step stops before its first GPU; the
// allocation it had is kept, valid, with status time_limit and every GPU
// of before the step.
TEST_F(ParvaGpuTest, TheTimeLimitStopsTheOptimizationStep) {
  Load("parva-slo6");
  SolveOptions options;
  options.time_limit_s = 0;
  RunResult run =
      RunOptimizer(*MakeOptimizer("parvagpu").value(), *problem_, options);
  ASSERT_EQ(run.outcome, Outcome::kTimeLimit) << run.reason;
  EXPECT_EQ(run.deployment.summary->status,
            deployment::SolveStatus::kTimeLimit);
  Solution full = ParvaGpuOptimizer().Solve(
      *problem_, deployment::CompletionRates(workload_.services.size(), 0.0),
      {});
  EXPECT_EQ(static_cast<int>(run.deployment.gpus.size()),
            full.info.parvagpu->gpus_before_optimization);
  auto report =
      deployment::Validate(run.deployment, workload_, profiles_, gpu_);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
}

// From non-zero completion rates only the missing part is placed, and a
// service served already gets nothing.
TEST_F(ParvaGpuTest, StartsFromGivenCompletionRates) {
  Load("parva-slo1");
  deployment::CompletionRates initial(workload_.services.size(), 1.0);
  initial[0] = 0.5;
  Solution s = ParvaGpuOptimizer().Solve(*problem_, initial, {});
  ASSERT_EQ(s.outcome, Outcome::kFeasible);
  ASSERT_EQ(s.configs.size(), 1u);
  for (int service : s.configs[0].services) EXPECT_EQ(service, 0);
  EXPECT_TRUE(deployment::AllSatisfied(
      deployment::Completion(s.configs, *caps_, initial)));
}

}  // namespace
}  // namespace migserve::optimizer
