#include "autoscale/sizer.h"

#include <gtest/gtest.h>

#include "cluster/placement.h"
#include "controller/transition_target.h"
#include "profile/profile_csv.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::autoscale {
namespace {

class SizerTest : public ::testing::Test {
 protected:
  SizerTest()
      : workload_(workload::ParseWorkload(R"(gpu: A100-SXM4-80GB
services:
  - {name: bert-1, model: bert, throughput: 4000, latency_ms: 100}
  - {name: resnet50-1, model: resnet50, throughput: 4000, latency_ms: 100}
)",
                                          "w.yaml")
                      .value()),
        profiles_(profile::LoadProfileCsv(
                      testing::SourcePath("data/profiles/a100-80gb.csv"))
                      .value()) {}

  // The cluster serving `rates`, with as many idle GPUs again.
  cluster::ClusterState Serving(const Sizer& sizer,
                                const std::vector<double>& rates) {
    deployment::Deployment d = sizer.Deploy(rates, nullptr).value();
    return cluster::ClusterFromDeployment(d, {8, 2 * d.UsedGpus()}).value();
  }

  workload::Workload workload_;
  profile::ProfileTable profiles_;
};

// Traffic moves from one service to the other. Without a budget the move
// partitions idle GPUs anew (created before anything goes, held beside the
// GPUs it empties); within a budget of the GPUs serving now it goes on the
// GPUs whose replicas all go, and holds no more.
TEST_F(SizerTest, AMoveWithinABudgetGoesOnTheGpusItEmpties) {
  Sizer sizer = Sizer::Make(workload_, profiles_, {}).value();
  cluster::ClusterState now = Serving(sizer, {8000, 500});
  const std::vector<double> after = {500, 8000};
  Sizer::Move free = sizer.DeployWithin(after, now, 0, false).value();
  ASSERT_EQ(free.over, "");
  int budget = std::max(now.UsedGpus(), free.target.UsedGpus());
  ASSERT_GT(controller::GpusHeld(now, free.target), budget);

  Sizer::Move held = sizer.DeployWithin(after, now, budget, false).value();
  EXPECT_EQ(held.over, "");
  EXPECT_FALSE(held.to_ceiling);
  EXPECT_EQ(held.rates, after);
  EXPECT_EQ(held.target.UsedGpus(), free.target.UsedGpus());
  EXPECT_LE(controller::GpusHeld(now, held.target), budget);
}

// With a ceiling (replay's: the trace's peaks), a move that would take
// more than 90% of the budget goes to the ceiling instead, and one from
// the ceiling is held there; without one, a move over the budget says
// what it needs.
TEST_F(SizerTest, NearTheBudgetAMoveGoesToTheCeiling) {
  const std::vector<double> peaks = {8000, 8000};
  SizerOptions options;
  options.ceiling = peaks;
  Sizer sizer = Sizer::Make(workload_, profiles_, options).value();
  const int budget = sizer.Deploy(peaks, nullptr).value().UsedGpus();
  cluster::ClusterState now = Serving(sizer, {1000, 1000});
  const std::vector<double> high = {7800, 7800};
  ASSERT_GT(sizer.Deploy(high, nullptr).value().UsedGpus(), 0.9 * budget);

  Sizer::Move up = sizer.DeployWithin(high, now, budget, false).value();
  EXPECT_EQ(up.over, "");
  EXPECT_TRUE(up.to_ceiling);
  EXPECT_EQ(up.rates, peaks);
  EXPECT_EQ(up.target.UsedGpus(), budget);
  EXPECT_LE(controller::GpusHeld(now, up.target), budget);

  Sizer::Move there = sizer.DeployWithin(high, now, budget, true).value();
  EXPECT_EQ(there.over, "held at the ceiling");
  EXPECT_TRUE(there.to_ceiling);

  // Below 90% of the budget a move is the one asked for.
  Sizer::Move low =
      sizer.DeployWithin({2000, 2000}, now, budget, false).value();
  EXPECT_EQ(low.over, "");
  EXPECT_FALSE(low.to_ceiling);

  Sizer plain = Sizer::Make(workload_, profiles_, {}).value();
  Sizer::Move over =
      plain.DeployWithin({16000, 16000}, now, budget, false).value();
  EXPECT_EQ(over.over.rfind("the rates need at least ", 0), 0u) << over.over;
}

}  // namespace
}  // namespace migserve::autoscale
