#include "cluster/apply.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::cluster {
namespace {

using testing::A100;
mig::Instance Three(int start) {
  return {A100().FindProfile("3g.40gb"), start};
}
const GpuId kGpu0{"n0", 0};
const GpuId kGpu1{"n1", 0};
InstanceRef At(const GpuId& gpu, mig::Instance instance) {
  return {gpu, &A100(), instance};
}

Action Act(int id, ActionKind kind, InstanceRef at, Replica replica = {}) {
  Action a;
  a.id = id;
  a.kind = kind;
  a.at = at;
  a.replica = std::move(replica);
  return a;
}

// GPU 0: 3g@0 serving "a", 3g@4 idle. GPU 1 (another node): empty.
ClusterState State() {
  ClusterState s;
  s.gpus.push_back(
      {kGpu0,
       &A100(),
       {{Three(0), Replica{"a", 8, 1, 100, 10}}, {Three(4), std::nullopt}}});
  s.gpus.push_back({kGpu1, &A100(), {}});
  return s;
}

TEST(ApplyTest, MigrateMovesTheReplica) {
  ClusterState s = State();
  Action a =
      Act(0, ActionKind::kMigrate, At(kGpu0, Three(0)), {"a", 8, 1, 100, 10});
  a.to = At(kGpu0, Three(4));
  ASSERT_TRUE(StartAction(a, &s).ok());
  EXPECT_DOUBLE_EQ(s.Capacity()["a"], 0);  // it does not count while moving
  EXPECT_FALSE(HasTakenEffect(a, s));
  ASSERT_TRUE(FinishAction(a, &s).ok());
  EXPECT_TRUE(HasTakenEffect(a, s));
  EXPECT_FALSE(s.gpus[0].slots[0].replica.has_value());
  EXPECT_EQ(s.gpus[0].slots[1].replica->service, "a");
}

TEST(ApplyTest, RefusesImpossibleActionsAndLeavesStateAlone) {
  ClusterState s = State();
  Action busy =
      Act(1, ActionKind::kCreate, At(kGpu0, Three(0)), {"b", 8, 1, 50, 10});
  Status st = ApplyAction(busy, &s);
  EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("already serves a"), std::string::npos);

  Action wipe = Act(2, ActionKind::kRepartition, At(kGpu0, {}));
  wipe.remove = {Three(0), Three(4)};
  wipe.add = {{A100().FindProfile("7g.80gb"), 0}};
  st = ApplyAction(wipe, &s);
  EXPECT_NE(st.message().find("still serves a"), std::string::npos);

  Action gone =
      Act(3, ActionKind::kDelete, At(kGpu1, Three(0)), {"a", 8, 1, 100, 10});
  EXPECT_FALSE(ApplyAction(gone, &s).ok());
  EXPECT_DOUBLE_EQ(s.Capacity()["a"], 100);
}

TEST(ApplyTest, PartialRepartitionKeepsOtherInstances) {
  ClusterState s = State();
  Action split = Act(0, ActionKind::kRepartition, At(kGpu0, {}));
  split.remove = {Three(4)};
  split.add = {{A100().FindProfile("2g.20gb"), 4},
               {A100().FindProfile("1g.10gb"), 6}};
  ASSERT_TRUE(ApplyAction(split, &s).ok());
  EXPECT_EQ(s.gpus[0].layout().ToString(A100()),
            "3g.40gb@0+2g.20gb@4+1g.10gb@6");
  EXPECT_TRUE(HasTakenEffect(split, s));
  EXPECT_EQ(s.gpus[0].Find(Three(0))->replica->service, "a");
}

TEST(ApplyTest, RefusesAnInstanceOfAnotherGpuModel) {
  ClusterState s = State();
  const mig::GpuModel& h100 =
      *mig::GpuCatalog::Default().Find("H100-SXM5-80GB").value();
  Action create = Act(4, ActionKind::kCreate,
                      {kGpu0, &h100, {h100.FindProfile("3g.40gb"), 4}},
                      {"b", 8, 1, 50, 10});
  Status st = ApplyAction(create, &s);
  EXPECT_EQ(st.message(),
            "action 4 (create b on GPU n0/0 3g.40gb@4): GPU n0/0 is "
            "A100-SXM4-80GB, not H100-SXM5-80GB");
  Action split = Act(5, ActionKind::kRepartition, {kGpu1, &h100, {}});
  split.add = {{h100.FindProfile("7g.80gb"), 0}};
  EXPECT_FALSE(ApplyAction(split, &s).ok());
  EXPECT_TRUE(s.gpus[1].slots.empty());
}

}  // namespace
}  // namespace migserve::cluster
