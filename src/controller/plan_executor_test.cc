#include "controller/plan_executor.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/simulated_cluster.h"
#include "cluster/testing/fault_injecting_backend.h"
#include "controller/planner.h"
#include "deployment/deployment_json.h"
#include "deployment/testing/shipped.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

using cluster::Action;
using testing::ShippedDeployment;

// Hooks that record what the executor tells them, and refuse to start one
// action (-1: none).
class RecordingHooks : public ExecutionHooks {
 public:
  explicit RecordingHooks(int refuse = -1) : refuse_(refuse) {}

  Status MayAct() override { return Status::Ok(); }
  Status Begin(const cluster::ClusterState&,
               const std::vector<const Action*>& started) override {
    ++begins;
    resumed = started.size();
    return Status::Ok();
  }
  Status Guard(const Action& a, const cluster::ClusterState&,
               const std::map<std::string, double>&,
               const std::vector<const Action*>&) override {
    if (a.id == refuse_) return Status::Unavailable("refused");
    return Status::Ok();
  }
  Status Starting(const Action& a, const cluster::ClusterState&) override {
    events.push_back({true, a.id});
    return Status::Ok();
  }
  Status Finished(const Action& a, const cluster::ClusterState&) override {
    events.push_back({false, a.id});
    return Status::Ok();
  }

  int begins = 0;
  size_t resumed = 0;
  std::vector<std::pair<bool, int>> events;  // (started, id)

 private:
  int refuse_;
};

struct PlanCase {
  cluster::ClusterState current;
  cluster::TransitionPlan plan;
};

PlanCase DayToNight() {
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  PlanCase s;
  s.current = cluster::ClusterFromDeployment(day, {8, 24}).value();
  s.plan = PlanTransition(s.current, night, MakeGoal(day, night)).value();
  return s;
}

TEST(PlanExecutorTest, TellsTheHooksOfEveryStartAndFinishInDagOrder) {
  PlanCase s = DayToNight();
  cluster::SimulatedCluster sim(s.current);
  auto journal = Journal::Open(":memory:").value();
  RecordingHooks hooks;
  PlanExecutor executor(&sim, journal.get(), {});
  ASSERT_TRUE(executor.Run(1, s.plan, {}, &hooks).ok());
  EXPECT_EQ(hooks.begins, 1);
  EXPECT_EQ(hooks.resumed, 0u);
  EXPECT_EQ(executor.actions_run(), static_cast<int>(s.plan.actions.size()));
  std::set<int> started, finished;
  for (auto [start, id] : hooks.events) {
    if (!start) {
      EXPECT_TRUE(started.count(id)) << id;
      EXPECT_TRUE(finished.insert(id).second) << id;
      continue;
    }
    EXPECT_TRUE(started.insert(id).second) << id;
    const Action& a =
        *std::find_if(s.plan.actions.begin(), s.plan.actions.end(),
                      [&, id = id](const Action& x) { return x.id == id; });
    for (int before : a.after) EXPECT_TRUE(finished.count(before)) << id;
  }
  EXPECT_EQ(finished.size(), s.plan.actions.size());
}

TEST(PlanExecutorTest, AGuardsRefusalEndsTheRunBeforeTheActionStarts) {
  PlanCase s = DayToNight();
  int refused = s.plan.actions.back().id;
  cluster::SimulatedCluster sim(s.current);
  auto journal = Journal::Open(":memory:").value();
  int version = journal->BeginPlan("t", "p", "").value();
  RecordingHooks hooks(refused);
  PlanExecutor executor(&sim, journal.get(), {});
  Status run = executor.Run(version, s.plan, {}, &hooks);
  EXPECT_EQ(run.code(), Status::Code::kUnavailable);
  EXPECT_EQ(run.message(), "refused");
  EXPECT_EQ(sim.starts().count(refused), 0u);
  auto journaled = journal->Current().value();
  ASSERT_TRUE(journaled.has_value());
  EXPECT_EQ(journaled->actions.count(refused), 0u);
  for (auto [start, id] : hooks.events) EXPECT_NE(id, refused);
}

// A backend that keeps the cluster in memory is read through its live view:
// one Observe per run, not one per action event (a 20,000-action plan on
// 10,000 GPUs copied the cluster 20,000 times); a GPU lost mid-run is
// still named.
TEST(PlanExecutorTest, ReadsALiveClusterWithoutObservingAtEveryEvent) {
  PlanCase s = DayToNight();
  for (bool lose : {false, true}) {
    cluster::Faults faults;
    if (lose)
      faults = {.lose_gpu = cluster::GpuId{"node-2", 7}, .lose_at_s = 1};
    cluster::SimulatedCluster sim(s.current, {}, 1, faults);
    cluster::FaultInjectingBackend counted(&sim, {});
    auto journal = Journal::Open(":memory:").value();
    RecordingHooks hooks;
    PlanExecutor executor(&counted, journal.get(), {});
    Status run = executor.Run(1, s.plan, {}, &hooks);
    EXPECT_EQ(counted.observes(), 1) << lose;
    if (lose) {
      EXPECT_EQ(run.message(), "GPU node-2/7 was lost");
    } else {
      EXPECT_TRUE(run.ok()) << run.message();
      EXPECT_EQ(counted.results(), static_cast<int>(s.plan.actions.size()));
    }
  }
}

}  // namespace
}  // namespace migserve::controller
