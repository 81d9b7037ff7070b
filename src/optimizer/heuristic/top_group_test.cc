// The greedy finds its pair group over classes of services (issue 32): the
// group it finds must be the one scoring every group finds, to the bit and
// to the lowest group among equals, after every rise of the rates.
#include "optimizer/heuristic/top_group.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "optimizer/testing/shipped_workload.h"

namespace migserve::optimizer {
namespace {

class TopGroupTest : public ShippedWorkloadTest {};

// Scores every group: the highest score, the lowest group among equals,
// and how many groups reach it.
int EveryGroupsTop(const ConfigSpace& space,
                   const deployment::CompletionRates& rates,
                   const ScoreRule& rule, double* score, int* equals) {
  int top = -1;
  *score = 0;
  *equals = 0;
  for (int g = 0; g < space.num_groups(); ++g) {
    double sc;
    if (space.BestConfig(g, rates, rule, &sc) < 0) continue;
    if (sc > *score) {
      *score = sc;
      top = g;
      *equals = 1;
    } else if (sc == *score) {
      ++*equals;
    }
  }
  return top;
}

// 30 services under the paper's capacity model (classes of several
// services), ten of them copies of others at the same rates, so that
// groups of different services tie; rates rise a service (and its copy) at
// a time until every service is satisfied; under both score rules.
TEST_F(TopGroupTest, FindsWhatScoringEveryGroupFinds) {
  GenerateInClasses(30, 90, 9);
  // Services 2k + 1 < 20 are copies of 2k, at its rate always.
  auto original = [](int s) { return s < 20 ? s - s % 2 : s; };
  for (int k = 1; k < 20; k += 2)
    workload_.services[k] = workload_.services[k - 1];
  for (int k = 0; k < 30; ++k) {
    workload_.services[k].name = "s" + std::to_string(k);
  }
  Rebuild();
  ConfigSpace space(*problem_);
  ASSERT_LT(space.num_classes(), 20);
  const int n = problem_->num_services();
  // The default score and the paper's (no cap at what a service misses).
  for (bool cap : {true, false}) {
    SCOPED_TRACE(cap ? "capped" : "paper's score");
    std::mt19937 rng(4);
    std::uniform_real_distribution<double> start(0.0, 0.5);
    std::uniform_real_distribution<double> rise(0.0, 0.3);
    std::uniform_int_distribution<int> pick(0, n - 1);
    deployment::CompletionRates rates(n);
    for (double& r : rates) r = start(rng);
    for (int s = 0; s < n; ++s) rates[s] = rates[original(s)];
    ScoreRule rule;
    rule.cap_utility = cap;
    TopGroup top(space, rates, rule);
    int steps = 0;
    int ties = 0;
    while (true) {
      double want_score;
      int equals;
      int want = EveryGroupsTop(space, rates, rule, &want_score, &equals);
      double score;
      ASSERT_EQ(top.Find(&score), want) << "step " << steps;
      ASSERT_EQ(score, want_score) << "step " << steps;
      if (want < 0) break;
      ties += equals > 1;
      int a = space.group_services(want).first;
      // A service of the top group, or any service, and its copies.
      int s = original(steps % 3 == 0 ? a : pick(rng));
      double up = rise(rng);
      for (int t = 0; t < n; ++t) {
        if (original(t) != s) continue;
        rates[t] += up;
        top.Changed(t);
      }
      ++steps;
    }
    EXPECT_GT(steps, 100);
    EXPECT_GT(ties, 10) << steps;
  }
}

}  // namespace
}  // namespace migserve::optimizer
