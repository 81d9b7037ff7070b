#include "cluster/simulated_cluster.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

const mig::GpuModel& A100() {
  return *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
}
mig::Instance Seven() { return {A100().FindProfile("7g.80gb"), 0}; }

ActionDurations NoJitter() {
  ActionDurations d;
  d.jitter = 0;
  return d;
}

Faults FailAndLose() {
  Faults f;
  f.fail_action = 0;
  f.lose_gpu = GpuId{"n", 1};
  f.lose_at_s = 10;
  return f;
}

ClusterState TwoIdleGpus() {
  ClusterState s;
  s.gpus.push_back({{"n", 0}, &A100(), {{Seven(), std::nullopt}}});
  s.gpus.push_back({{"n", 1}, &A100(), {{Seven(), std::nullopt}}});
  return s;
}

Action Create(int id, int gpu) {
  Action a;
  a.id = id;
  a.at = {{"n", gpu}, &A100(), Seven()};
  a.replica = {"a", 8, 1, 100, 10};
  return a;
}

TEST(SimulatedClusterTest, IndependentActionsRunInParallel) {
  SimulatedCluster sim(TwoIdleGpus(), NoJitter());
  ASSERT_TRUE(sim.Start(Create(0, 0)).ok());
  ASSERT_TRUE(sim.Start(Create(1, 1)).ok());
  EXPECT_EQ(sim.Running().size(), 2u);
  EXPECT_TRUE(sim.WaitAny()->status.ok());
  EXPECT_TRUE(sim.WaitAny()->status.ok());
  EXPECT_DOUBLE_EQ(sim.now_s(), 30);  // not 60
  EXPECT_DOUBLE_EQ(sim.state().Capacity()["a"], 200);
  EXPECT_EQ(sim.peak_gpus(), 2);
  EXPECT_DOUBLE_EQ(sim.min_capacity().at("a"), 100);  // first seen at 100
  EXPECT_EQ(sim.WaitAny().status().code(), Status::Code::kFailedPrecondition);
}

TEST(SimulatedClusterTest, RecordsEachActionAndEveryCapacityChange) {
  SimulatedCluster sim(TwoIdleGpus(), NoJitter());
  ASSERT_TRUE(sim.Start(Create(0, 0)).ok());
  ASSERT_TRUE(sim.WaitAny()->status.ok());  // at 30 s
  ASSERT_TRUE(sim.Start(Create(1, 1)).ok());
  ASSERT_TRUE(sim.WaitAny()->status.ok());  // at 60 s
  ASSERT_EQ(sim.timeline().size(), 2u);
  EXPECT_EQ(sim.timeline()[1].action.at.gpu, (GpuId{"n", 1}));
  EXPECT_EQ(sim.timeline()[1].action.replica.service, "a");
  EXPECT_DOUBLE_EQ(sim.timeline()[1].start_s, 30);
  const auto& history = sim.capacity_history();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_DOUBLE_EQ(history[0].time_s, 0);
  EXPECT_TRUE(history[0].capacity.empty());
  EXPECT_DOUBLE_EQ(history[1].time_s, 30);
  EXPECT_DOUBLE_EQ(history[1].capacity.at("a"), 100);
  EXPECT_DOUBLE_EQ(history[2].time_s, 60);
  EXPECT_DOUBLE_EQ(history[2].capacity.at("a"), 200);
}

TEST(SimulatedClusterTest, InjectedFailureAndLostGpu) {
  SimulatedCluster sim(TwoIdleGpus(), NoJitter(), 1, FailAndLose());
  ASSERT_TRUE(sim.Start(Create(0, 0)).ok());
  ASSERT_TRUE(sim.Start(Create(1, 1)).ok());
  ActionResult first = sim.WaitAny().value();
  ActionResult second = sim.WaitAny().value();
  EXPECT_EQ(first.id, 0);
  EXPECT_EQ(first.status.code(), Status::Code::kUnavailable);
  EXPECT_FALSE(second.status.ok());  // its GPU is gone
  EXPECT_EQ(sim.state().gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(sim.state().Capacity()["a"], 0);
  EXPECT_FALSE(sim.timeline()[0].ok);
}

}  // namespace
}  // namespace migserve::cluster
