#include "controller/planner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "cluster/plan_json.h"
#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

using cluster::ActionKind;
using cluster::ClusterState;
using cluster::TransitionPlan;
using deployment::Deployment;

const mig::GpuModel& A100() {
  return *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
}

Deployment Load(const std::string& name) {
  return deployment::LoadDeployment(
             testing::SourcePath("data/deployments/" + name + ".json"))
      .value();
}

ClusterState OnNodes(const Deployment& d, int nodes) {
  return cluster::ClusterFromDeployment(d, A100(), {8, 8 * nodes}).value();
}

std::map<ActionKind, int> Counts(const TransitionPlan& plan) {
  std::map<ActionKind, int> counts;
  for (const cluster::Action& a : plan.actions) ++counts[a.kind];
  return counts;
}

// Plans `from` -> `to` on `current` and checks the plan; returns it.
TransitionPlan PlanAndCheck(const ClusterState& current, const Deployment& from,
                            const Deployment& to) {
  TransitionGoal goal = MakeGoal(from, to);
  auto plan = PlanTransition(A100(), current, to, goal);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return {};
  SafetyReport report = CheckPlan(A100(), current, *plan, goal);
  for (const std::string& p : report.problems) ADD_FAILURE() << p;
  // The JSON round trip keeps the plan.
  std::string json = cluster::FormatPlan(*plan, A100());
  auto parsed = cluster::ParsePlan(json, "plan.json", A100());
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (parsed.ok()) {
    EXPECT_EQ(cluster::FormatPlan(*parsed, A100()), json);
  }
  return *plan;
}

TEST(PlannerTest, DayToNightIsSafeAndShrinksToFiveGpus) {
  Deployment day = Load("day"), night = Load("night");
  TransitionPlan plan = PlanAndCheck(OnNodes(day, 3), day, night);
  auto counts = Counts(plan);
  EXPECT_GT(counts[ActionKind::kDelete], counts[ActionKind::kCreate]);
}

TEST(PlannerTest, NightToDayIsSafeAndGrowsToSixteenGpus) {
  Deployment day = Load("day"), night = Load("night");
  TransitionPlan plan = PlanAndCheck(OnNodes(night, 3), night, day);
  auto counts = Counts(plan);
  EXPECT_GT(counts[ActionKind::kCreate], counts[ActionKind::kDelete]);
  EXPECT_GT(counts[ActionKind::kRepartition], 0);
}

TEST(PlannerTest, SameDeploymentNeedsNoAction) {
  Deployment day = Load("day");
  EXPECT_TRUE(PlanAndCheck(OnNodes(day, 3), day, day).actions.empty());
}

TEST(PlannerTest, MovesReplicaWithLocalMigrateWhenServiceHasSlack) {
  // The target has service a on one 3g at start 4, which no GPU holds: the
  // 3g replica at start 0 moves to the idle GPU 1 with one local migrate,
  // since a keeps 60 of its 50 req/s while it moves.
  auto d = [](const char* gpus, double need) {
    return deployment::ParseDeployment(
               fmt::format(R"({{"gpu": "A100-SXM4-80GB", "services": [
                 {{"name": "a", "throughput": {}}}, {{"name": "b", "throughput": 50}}],
                 "gpus": {}}})",
                           need, gpus),
               "d.json")
        .value();
  };
  Deployment from = d(R"([{"id": 0, "node": "n", "instances": [
      {"profile": "3g.40gb", "start": 0, "service": "a", "batch": 8, "throughput": 100},
      {"profile": "1g.10gb", "start": 4, "service": "a", "batch": 8, "throughput": 60}]},
      {"id": 1, "node": "n", "instances": []},
      {"id": 2, "node": "n", "instances": [
      {"profile": "7g.80gb", "start": 0, "service": "b", "batch": 8, "throughput": 60}]}])",
                      50);
  Deployment to = d(R"([{"id": 0, "instances": [
      {"profile": "3g.40gb", "start": 4, "service": "a", "batch": 8, "throughput": 100}]},
      {"id": 1, "instances": [
      {"profile": "7g.80gb", "start": 0, "service": "b", "batch": 8, "throughput": 60}]}])",
                    50);
  ClusterState current =
      cluster::ClusterFromDeployment(from, A100(), {}).value();
  TransitionPlan plan = PlanAndCheck(current, from, to);
  EXPECT_EQ(Counts(plan)[ActionKind::kMigrate], 1);
}

TEST(PlannerTest, RefusesWhenNoRoomForTemporaryReplica) {
  // Swap the services of a full two-GPU cluster: each needs all it has.
  auto d = [](const char* first, const char* second) {
    return deployment::ParseDeployment(
               fmt::format(R"({{"gpu": "A100-SXM4-80GB", "services": [
                 {{"name": "a", "throughput": 100}}, {{"name": "b", "throughput": 100}}],
                 "gpus": [{{"id": 0, "node": "n", "instances": [
                   {{"profile": "7g.80gb", "start": 0, "service": "{}", "throughput": 100}}]}},
                  {{"id": 1, "node": "n", "instances": [
                   {{"profile": "3g.40gb", "start": 0, "service": "{}", "throughput": 50}},
                   {{"profile": "3g.40gb", "start": 4, "service": "{}", "throughput": 50}}]}}]}})",
                           first, second, second),
               "d.json")
        .value();
  };
  Deployment from = d("a", "b"), to = d("b", "a");
  ClusterState current =
      cluster::ClusterFromDeployment(from, A100(), {}).value();
  auto plan = PlanTransition(A100(), current, to, MakeGoal(from, to));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("service"), std::string::npos);
  // One spare GPU is enough.
  cluster::AddSpareGpus(1, 8, &current);
  PlanAndCheck(current, from, to);
}

// A random deployment of `services` on `gpus` GPUs (maximal A100 layouts,
// throughput proportional to size), requiring `fill` of what it provides.
Deployment RandomDeployment(std::mt19937* rng, int services, int gpus,
                            double fill) {
  static const std::vector<mig::Layout> layouts =
      mig::MaximalLayouts(A100(), mig::MigOptions{});
  Deployment d;
  d.gpu = A100().name;
  std::vector<double> provided(services, 0);
  for (int g = 0; g < gpus; ++g) {
    deployment::DeployedGpu out{g, std::nullopt, std::nullopt, {}};
    const mig::Layout& layout = layouts[(*rng)() % layouts.size()];
    for (const mig::Instance& i : layout.instances()) {
      deployment::PlacedInstance p;
      p.profile = A100().profiles[i.profile].name;
      p.start = i.start;
      if ((*rng)() % 5 != 0) {
        int s = static_cast<int>((*rng)() % services);
        p.service = "s" + std::to_string(s);
        p.batch = 8;
        p.throughput =
            A100().profiles[i.profile].compute_slices * (100.0 + 10 * s);
        provided[s] += p.throughput;
      }
      out.instances.push_back(p);
    }
    d.gpus.push_back(out);
  }
  for (int s = 0; s < services; ++s) {
    d.services.push_back(
        {"s" + std::to_string(s), "m", fill * provided[s], 0, 0});
  }
  return d;
}

TEST(PlannerTest, RandomTransitionsPassTheAllOrdersCheck) {
  for (int seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    int services = 2 + seed % 4;
    Deployment from = RandomDeployment(&rng, services, 2 + seed % 7, 0.9);
    Deployment to = RandomDeployment(&rng, services, 2 + (seed / 3) % 7, 0.9);
    ClusterState current =
        cluster::ClusterFromDeployment(from, A100(), {4, 12}).value();
    SCOPED_TRACE(seed);
    PlanAndCheck(current, from, to);
  }
}

}  // namespace
}  // namespace migserve::controller
