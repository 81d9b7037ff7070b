#include "controller/controller.h"

#include <gtest/gtest.h>

#include "cluster/simulated_cluster.h"
#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::SimulatedCluster;
using deployment::Deployment;

struct Transition {
  Deployment from, to;
  ClusterState current;
  TransitionGoal goal;
};

Transition Load(const std::string& from, const std::string& to) {
  auto load = [](const std::string& name) {
    return deployment::LoadDeployment(
               testing::SourcePath("data/deployments/" + name + ".json"))
        .value();
  };
  Transition t{load(from), load(to), {}, {}};
  t.current = cluster::ClusterFromDeployment(t.from, {8, 24}).value();
  t.goal = MakeGoal(t.from, t.to);
  return t;
}

// Checks the invariant over the simulated timeline and the final state.
void ExpectReached(const Transition& t, const SimulatedCluster& sim) {
  for (const auto& [service, lowest] : sim.min_capacity()) {
    EXPECT_GE(lowest, t.goal.Floor(service) - 1e-6) << service;
  }
  ClusterState end = sim.state();
  std::map<std::string, double> capacity = end.Capacity();
  for (const auto& [service, required] : t.goal.required_after) {
    EXPECT_GE(capacity[service], required - 1e-6) << service;
  }
  EXPECT_LE(end.UsedGpus(), t.goal.target_gpus);
}

std::string Snapshot(const SimulatedCluster& sim) {
  return deployment::FormatDeployment(cluster::ToDeployment(sim.state(), {}));
}

TEST(ControllerTest, DayToNightAndBackKeepEveryService) {
  for (auto [from, to] :
       {std::pair{"day", "night"}, std::pair{"night", "day"}}) {
    Transition t = Load(from, to);
    SimulatedCluster sim(t.current);
    auto journal = Journal::Open(":memory:").value();
    Controller controller(&sim, journal.get());
    ASSERT_TRUE(controller.Transition(t.to, t.goal).ok()) << from;
    ExpectReached(t, sim);
    for (const auto& [id, count] : sim.starts()) EXPECT_EQ(count, 1) << id;
  }
}

TEST(ControllerTest, StopsStartingActionsOnceItMayNotAct) {
  // A controller that loses its lease after 7 actions starts no 8th; the
  // next one resumes the journal and each action starts exactly once.
  Transition t = Load("night", "day");
  SimulatedCluster sim(t.current);
  std::string path = testing::TempDir() + "/may-act.db";
  std::remove(path.c_str());
  int allowed = 7;
  {
    auto journal = Journal::Open(path).value();
    ControllerOptions options;
    options.may_act = [&]() {
      return allowed-- > 0 ? Status::Ok()
                           : Status::FailedPrecondition("lost the lease");
    };
    Status moved =
        Controller(&sim, journal.get(), options).Transition(t.to, t.goal);
    EXPECT_EQ(moved.code(), Status::Code::kAborted) << moved.ToString();
    EXPECT_EQ(moved.message(), "lost the lease");
  }
  // The first check is for the routes before any action.
  EXPECT_EQ(sim.starts().size(), 6u);
  auto journal = Journal::Open(path).value();
  ASSERT_TRUE(Controller(&sim, journal.get()).Transition(t.to, t.goal).ok());
  ExpectReached(t, sim);
  for (const auto& [id, count] : sim.starts()) EXPECT_EQ(count, 1) << id;
}

TEST(ControllerTest, SaysHowManyActionsAreDone) {
  // Due at every finished action: one line each, counting up to all.
  Transition t = Load("night", "day");
  SimulatedCluster sim(t.current);
  auto journal = Journal::Open(":memory:").value();
  ControllerOptions options;
  options.progress_every_s = 0;
  std::vector<std::string> counts;
  options.progress = [&](const std::string& line) {
    if (line.find(" actions done") != std::string::npos) {
      counts.push_back(line.substr(0, line.find(" of ")));
    }
  };
  ASSERT_TRUE(
      Controller(&sim, journal.get(), options).Transition(t.to, t.goal).ok());
  ASSERT_EQ(counts.size(), sim.starts().size());
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(counts[i], std::to_string(i + 1));
  }
}

TEST(ControllerTest, ResumesAfterACrashAtEveryActionBoundary) {
  Transition t = Load("night", "day");
  SimulatedCluster reference(t.current);
  auto memory = Journal::Open(":memory:").value();
  ASSERT_TRUE(
      Controller(&reference, memory.get()).Transition(t.to, t.goal).ok());
  size_t actions = reference.starts().size();
  ASSERT_GT(actions, 10u);
  for (size_t k = 1; k < actions; ++k) {
    SCOPED_TRACE(k);
    std::string path = testing::TempDir() + "/crash-" + std::to_string(k);
    SimulatedCluster sim(t.current);
    {
      auto journal = Journal::Open(path).value();
      ControllerOptions options;
      options.stop_after = static_cast<int>(k);
      Status run =
          Controller(&sim, journal.get(), options).Transition(t.to, t.goal);
      ASSERT_EQ(run.code(), Status::Code::kAborted) << run.ToString();
    }
    auto journal = Journal::Open(path).value();
    Controller restarted(&sim, journal.get());
    ASSERT_TRUE(restarted.Transition(t.to, t.goal).ok());
    EXPECT_EQ(restarted.stats().plans, 0);  // resumed, not replanned
    EXPECT_EQ(sim.starts().size(), actions);
    for (const auto& [id, count] : sim.starts()) EXPECT_EQ(count, 1) << id;
    ExpectReached(t, sim);
    EXPECT_EQ(Snapshot(sim), Snapshot(reference));
  }
}

TEST(ControllerTest, ReplansAfterAFailedAction) {
  Transition t = Load("night", "day");
  SimulatedCluster sim(t.current, {}, 1,
                       {.fail_action = 3, .lose_gpu = std::nullopt});
  auto journal = Journal::Open(":memory:").value();
  Controller controller(&sim, journal.get());
  ASSERT_TRUE(controller.Transition(t.to, t.goal).ok());
  EXPECT_EQ(controller.stats().plans, 2);
  ExpectReached(t, sim);
}

TEST(ControllerTest, ReplansAroundALostGpu) {
  Transition t = Load("night", "day");
  // GPU node-1/2 is idle at first and takes day replicas; it is lost 10 s
  // in, before any of its creates finish.
  SimulatedCluster sim(
      t.current, {}, 1,
      {.lose_gpu = cluster::GpuId{"node-1", 2}, .lose_at_s = 10});
  auto journal = Journal::Open(":memory:").value();
  Controller controller(&sim, journal.get());
  ASSERT_TRUE(controller.Transition(t.to, t.goal).ok());
  EXPECT_EQ(controller.stats().plans, 2);
  EXPECT_TRUE(controller.stats().short_services.empty());
  EXPECT_EQ(sim.state().FindGpu({"node-1", 2}), nullptr);
  ExpectReached(t, sim);
}

TEST(ControllerTest, NamesTheShortServiceAfterLosingItsGpu) {
  Transition t = Load("night", "day");
  // GPU node-0/0 serves seven night replicas of bert-1; losing it leaves
  // bert-1 below its floor.
  SimulatedCluster sim(
      t.current, {}, 1,
      {.lose_gpu = cluster::GpuId{"node-0", 0}, .lose_at_s = 1});
  auto journal = Journal::Open(":memory:").value();
  Controller controller(&sim, journal.get());
  ASSERT_TRUE(controller.Transition(t.to, t.goal).ok());
  std::vector<std::string> short_services = controller.stats().short_services;
  std::sort(short_services.begin(), short_services.end());
  EXPECT_EQ(short_services, (std::vector<std::string>{"bert-1"}));
  std::map<std::string, double> capacity = sim.state().Capacity();
  for (const auto& [service, required] : t.goal.required_after) {
    EXPECT_GE(capacity[service], required - 1e-6) << service;
  }
}

}  // namespace
}  // namespace migserve::controller
