#include "optimizer/milp_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "deployment/validator.h"
#include "mig/gpu_catalog.h"
#include "optimizer/brute_force.h"
#include "optimizer/registry.h"
#include "optimizer/shipped_workload_test.h"
#include "profile/profile_csv.h"
#include "util/test_util.h"
#include "workload/relaxed_bound.h"
#include "workload/workload_yaml.h"

namespace migserve::optimizer {
namespace {

using MilpTest = ShippedWorkloadTest;

// night (5 services) has a brute-force optimum of 5 GPUs; the MILP proves
// it, its deployment validates, and the bounds are ordered.
TEST_F(MilpTest, ProvesBruteForceOptimumOnNight) {
  Load("night");
  int optimum = BruteForceOptimum(*problem_, 6);
  ASSERT_EQ(optimum, 5);
  MilpOptimizer milp;
  RunResult run = RunOptimizer(milp, *problem_, SolveOptions{});
  EXPECT_EQ(run.outcome, Outcome::kOptimal);
  EXPECT_EQ(run.deployment.summary->status, "optimal");
  EXPECT_EQ(static_cast<int>(run.deployment.gpus.size()), optimum);
  auto report =
      deployment::Validate(run.deployment, workload_, profiles_, gpu_);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->problems[0];
  double lp = LpBound(*problem_, deployment::CompletionRates(5, 0.0));
  EXPECT_LE(workload::RelaxedBound(*caps_, gpu_), lp + 1e-6);
  EXPECT_LE(std::ceil(lp - 1e-9), optimum);
  EXPECT_DOUBLE_EQ(run.deployment.summary->extra["lp_bound"].get<double>(), lp);
}

// day: the paper's greedy needs 17 GPUs, the optimum is 16 (LP 15.5).
TEST_F(MilpTest, BeatsGreedyOnDay) {
  Load("day");
  MilpOptimizer milp;
  RunResult run = RunOptimizer(milp, *problem_, SolveOptions{});
  EXPECT_EQ(run.outcome, Outcome::kOptimal);
  EXPECT_EQ(run.deployment.gpus.size(), 16u);
  EXPECT_EQ(run.deployment.summary->extra["seed_gpus"], 17);
  auto report =
      deployment::Validate(run.deployment, workload_, profiles_, gpu_);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
}

// parva-slo6 with MPS up to 3 processes: the relaxed bound says 15, the
// MILP proves 16, and the summary's lower bound is the proven one.
TEST_F(MilpTest, SummaryCarriesProvenBound) {
  Load("parva-slo6", 3);
  EXPECT_EQ(workload::CeilGpus(workload::RelaxedBound(*caps_, gpu_)), 15);
  MilpOptimizer milp;
  RunResult run = RunOptimizer(milp, *problem_, SolveOptions{});
  ASSERT_EQ(run.outcome, Outcome::kOptimal);
  EXPECT_EQ(run.deployment.gpus.size(), 16u);
  EXPECT_EQ(run.deployment.summary->lower_bound, 16);
}

// From non-zero completion rates only the missing part is placed.
TEST_F(MilpTest, StartsFromGivenCompletionRates) {
  Load("night");
  MilpOptimizer milp;
  deployment::CompletionRates initial = {1.0, 1.0, 1.0, 1.0, 0.0};
  Solution s = milp.Solve(*problem_, initial, SolveOptions{});
  ASSERT_EQ(s.outcome, Outcome::kOptimal);
  deployment::CompletionRates after =
      deployment::Completion(s.configs, *caps_, initial);
  EXPECT_TRUE(deployment::AllSatisfied(after));
  EXPECT_LE(s.configs.size(), 2u);
}

}  // namespace
}  // namespace migserve::optimizer
