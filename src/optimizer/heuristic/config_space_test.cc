// The config space is built per pair of service classes (issue 32): what
// it produces per group must be what the group's own configs give.
#include "optimizer/heuristic/config_space.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>

#include "optimizer/testing/shipped_workload.h"

namespace migserve::optimizer {
namespace {

class ConfigSpaceTest : public ShippedWorkloadTest {};

// 120 services drawn from every model at two SLOs, under the paper's
// capacity model (the p99 credits also depend on a service's rate over an
// instance's, up to 64 instances' worth): a class per model and SLO, and a
// group per service and per pair of services.
TEST_F(ConfigSpaceTest, ServicesOfOneModelAndSloShareAClass) {
  GenerateInClasses(120, 400, 5);
  std::set<std::pair<std::string, double>> kinds;
  for (const workload::Service& s : workload_.services) {
    kinds.emplace(s.model, s.latency_ms);
  }
  ConfigSpace space(*problem_);
  EXPECT_EQ(space.num_classes(), static_cast<int>(kinds.size()));
  EXPECT_LT(space.num_classes(), 40);
  EXPECT_EQ(space.num_groups(), 120 + 120 * 119 / 2);
  EXPECT_EQ(space.group_services(7), std::make_pair(7, deployment::kIdle));
  EXPECT_EQ(space.group_services(120), std::make_pair(0, 1));
  EXPECT_EQ(space.group_services(120 + 119), std::make_pair(1, 2));
  EXPECT_EQ(space.group_services(space.num_groups() - 1),
            std::make_pair(118, 119));
}

// Under random completion rates, the best config of every group (scored
// on its front only) is the best of all the group's configs, first in
// group order among equals; each config's utilities are those of its
// expanded GPU config. Under the paper's capacity model, so that classes
// hold several services.
TEST_F(ConfigSpaceTest, EveryGroupsBestIsTheBestOfAllItsConfigs) {
  GenerateInClasses(30, 90, 9);
  ConfigSpace space(*problem_);
  ASSERT_LT(space.num_classes(), 30);
  const int n = problem_->num_services();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> rate(0.0, 1.2);
  ScoreRule rule;
  int checked = 0;
  for (int round = 0; round < 20; ++round) {
    deployment::CompletionRates rates(n);
    for (double& r : rates) r = rate(rng);
    for (int g = 0; g < space.num_groups(); ++g) {
      double best = 0;
      int arg = -1;
      space.ForEachConfig(g, [&](int id, const PairConfig& c) {
        double sc = space.Score(c, rates, rule);
        if (sc > best) {
          best = sc;
          arg = id;
        }
        if (round == 0) {
          deployment::GpuConfig expanded = space.Expand(c);
          double a = 0;
          double b = 0;
          for (size_t k = 0; k < expanded.services.size(); ++k) {
            int p = expanded.layout.instances()[k].profile;
            if (expanded.services[k] == c.a)
              a += problem_->caps.utility(c.a, p);
            if (c.b != deployment::kIdle && expanded.services[k] == c.b) {
              b += problem_->caps.utility(c.b, p);
            }
          }
          EXPECT_NEAR(c.utility_a, a, 1e-9);
          EXPECT_NEAR(c.utility_b, b, 1e-9);
        }
      });
      double score = -1;
      EXPECT_EQ(space.BestConfig(g, rates, rule, &score), arg) << "group " << g;
      EXPECT_EQ(score, best) << "group " << g;
      checked += arg >= 0;
    }
  }
  EXPECT_GT(checked, 20 * n);
}

}  // namespace
}  // namespace migserve::optimizer
