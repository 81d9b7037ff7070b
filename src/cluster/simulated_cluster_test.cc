#include "cluster/simulated_cluster.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::cluster {
namespace {

using testing::A100;
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

// Through DRA a repartition is its claims one after another: the 7g
// replaced by seven 1g takes seven claims' time, one that only removes
// takes a repartition's.
TEST(SimulatedClusterTest, ThroughDraARepartitionTakesItsClaimsInTurn) {
  ActionDurations d = NoJitter();
  d.claim_s = 3;
  SimulatedCluster sim(TwoIdleGpus(), d);
  Action split;
  split.id = 0;
  split.kind = ActionKind::kRepartition;
  split.at = {{"n", 0}, &A100(), Seven()};
  split.remove = {Seven()};
  for (int start = 0; start < 7; ++start) {
    split.add.push_back({A100().FindProfile("1g.10gb"), start});
  }
  Action empty = split;
  empty.id = 1;
  empty.at.gpu = {"n", 1};
  empty.add.clear();
  ASSERT_TRUE(sim.Start(split).ok());
  ASSERT_TRUE(sim.Start(empty).ok());
  EXPECT_EQ(sim.WaitAny()->id, 1);
  EXPECT_DOUBLE_EQ(sim.now_s(), 8);
  EXPECT_EQ(sim.WaitAny()->id, 0);
  EXPECT_DOUBLE_EQ(sim.now_s(), 21);
  d.claim_s = -1;
  EXPECT_EQ(d.Validate().code(), Status::Code::kInvalidArgument);
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

// The capacities and busy GPUs the cluster keeps GPU by GPU as actions
// start and end equal those counted over the whole cluster, through
// creates, a delete, an eviction, a lost GPU and GPUs that come back.
TEST(SimulatedClusterTest, ItsBooksAgreeWithTheWholeClusterAfterEveryEvent) {
  ClusterState four;
  for (int g = 0; g < 4; ++g) {
    four.gpus.push_back({{"n", g}, &A100(), {{Seven(), std::nullopt}}});
  }
  Faults lose;
  lose.lose_gpu = GpuId{"n", 2};
  lose.lose_at_s = 40;
  SimulatedCluster sim(four, NoJitter(), 1, lose);
  auto agree = [&](const char* when) {
    std::map<std::string, double> whole = sim.state().Capacity();
    std::map<std::string, double> kept = sim.capacity_history().back().capacity;
    std::erase_if(kept, [](const auto& entry) { return entry.second == 0; });
    EXPECT_EQ(kept, whole) << when;  // to the last bit
    std::optional<LiveView> live = sim.Live();
    ASSERT_TRUE(live.has_value());
    EXPECT_EQ(live->state, &sim.state());
    EXPECT_EQ(*live->capacity, whole) << when;
  };
  for (int g = 0; g < 4; ++g) {
    Action a = Create(g, g);
    a.replica.credit = 100.1 + g / 3.0;  // sums that round
    ASSERT_TRUE(sim.Start(a).ok());
  }
  EXPECT_EQ(sim.peak_gpus(), 4);  // running creates count
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(sim.WaitAny()->status.ok());
    agree("create");
  }
  Action del = Create(9, 1);
  del.kind = ActionKind::kDelete;
  del.replica.credit = 100.1 + 1 / 3.0;
  ASSERT_TRUE(sim.Start(del).ok());
  ASSERT_TRUE(sim.WaitAny()->status.ok());  // at 35 s
  agree("delete");
  ASSERT_TRUE(sim.EvictReplica({"n", 0}, Seven()).ok());
  agree("eviction");
  int version = sim.Live()->gpus_version;
  ASSERT_TRUE(sim.Start(Create(10, 1)).ok());
  ASSERT_TRUE(sim.WaitAny()->status.ok());  // n/2 is lost at 40 s first
  EXPECT_EQ(sim.state().gpus.size(), 3u);
  agree("loss");
  EXPECT_NE(sim.Live()->gpus_version, version);
  version = sim.Live()->gpus_version;
  sim.AddGpus({{{"n", 2}, &A100(), {{Seven(), std::nullopt}}}});
  agree("return");
  EXPECT_NE(sim.Live()->gpus_version, version);
  // n/1 recreated at 100, n/3 as created; n/0 evicted, n/2 back idle.
  EXPECT_DOUBLE_EQ(sim.state().Capacity().at("a"), 100 + (100.1 + 3 / 3.0));
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
