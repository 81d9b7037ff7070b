#include "controller/planner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "cluster/placement.h"
#include "cluster/plan_json.h"
#include "deployment/deployment_json.h"
#include "deployment/testing/shipped.h"
#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "mig/testing/gpus.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

using cluster::ActionKind;
using cluster::ClusterState;
using cluster::TransitionPlan;
using deployment::Deployment;
using testing::ShippedDeployment;

using testing::A100;
using testing::H100;

ClusterState OnNodes(const Deployment& d, int nodes) {
  return cluster::ClusterFromDeployment(d, {8, 8 * nodes}).value();
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
  auto plan = PlanTransition(current, to, goal);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return {};
  SafetyReport report = CheckPlan(current, *plan, goal);
  for (const std::string& p : report.problems) ADD_FAILURE() << p;
  // The JSON round trip keeps the plan.
  std::string json = cluster::FormatPlan(*plan);
  auto parsed = cluster::ParsePlan(json, "plan.json");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (parsed.ok()) {
    EXPECT_EQ(cluster::FormatPlan(*parsed), json);
  }
  return *plan;
}

TEST(PlannerTest, DayToNightIsSafeAndShrinksToFiveGpus) {
  Deployment day = ShippedDeployment("day"), night = ShippedDeployment("night");
  TransitionPlan plan = PlanAndCheck(OnNodes(day, 3), day, night);
  auto counts = Counts(plan);
  EXPECT_GT(counts[ActionKind::kDelete], counts[ActionKind::kCreate]);
}

TEST(PlannerTest, NightToDayIsSafeAndGrowsToSixteenGpus) {
  Deployment day = ShippedDeployment("day"), night = ShippedDeployment("night");
  TransitionPlan plan = PlanAndCheck(OnNodes(night, 3), night, day);
  auto counts = Counts(plan);
  EXPECT_GT(counts[ActionKind::kCreate], counts[ActionKind::kDelete]);
  EXPECT_GT(counts[ActionKind::kRepartition], 0);
}

TEST(PlannerTest, SameDeploymentNeedsNoAction) {
  Deployment day = ShippedDeployment("day");
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
  ClusterState current = cluster::ClusterFromDeployment(from, {}).value();
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
  ClusterState current = cluster::ClusterFromDeployment(from, {}).value();
  auto plan = PlanTransition(current, to, MakeGoal(from, to));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("service"), std::string::npos);
  // One spare GPU is enough.
  cluster::AddSpareGpus(1, 8, A100(), &current);
  PlanAndCheck(current, from, to);
}

TEST(PlannerTest, SurvivingDeploymentsKeepWhatALossLeavesWhileMoving) {
  // Both sides survive losing a GPU (milp's deployments of day and night
  // with survive: {domain: gpu, keep: 1}), so each service keeps its floor
  // after losing any one GPU at any moment of the move.
  Deployment day = ShippedDeployment("day-survive"),
             night = ShippedDeployment("night-survive");
  for (auto [from, to] : {std::pair{&night, &day}, std::pair{&day, &night}}) {
    ClusterState current = OnNodes(*from, 3);
    TransitionGoal goal = MakeGoal(*from, *to);
    ASSERT_TRUE(goal.survive);
    std::map<std::string, double> kept = KeptAfterLoss(current, goal);
    ASSERT_EQ(kept.size(), 5u);
    for (const auto& [service, value] : kept) {
      EXPECT_NEAR(value, goal.Floor(service), 1e-6) << service;
    }
    auto planned = PlanSurvivingIfPossible(current, *to, goal);
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    EXPECT_EQ(planned->survive_dropped.why, "");
    SafetyReport report = CheckPlan(current, planned->plan, goal);
    EXPECT_TRUE(report.ok()) << report.problems.front();
    // The floors alone do not keep it: their plan leaves a service short
    // after some loss at some moment.
    TransitionGoal floors = goal;
    floors.survive.reset();
    auto plain = PlanTransition(current, *to, floors);
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(CheckPlan(current, *plain, floors).ok());
    EXPECT_FALSE(CheckPlan(current, *plain, goal).ok());
  }
}

TEST(PlannerTest, DropsSurviveOnlyWhereThereIsNoRoomForIt) {
  // Service a on two whole GPUs becomes a 4g on each: a whole GPU must go
  // first, and a loss of the other then leaves nothing.
  auto d = [](const char* profile) {
    return deployment::ParseDeployment(fmt::format(R"({{"gpu": "A100-SXM4-80GB",
                 "services": [{{"name": "a", "throughput": 100}}],
                 "survive": {{"domain": "gpu", "keep": 1}},
                 "gpus": [{{"id": 0, "node": "n", "instances": [
                   {{"profile": "{0}", "start": 0, "service": "a", "throughput": 100}}]}},
                  {{"id": 1, "node": "n", "instances": [
                   {{"profile": "{0}", "start": 0, "service": "a", "throughput": 100}}]}}]}})",
                                                   profile),
                                       "d.json")
        .value();
  };
  Deployment from = d("7g.80gb"), to = d("4g.40gb");
  ClusterState current = cluster::ClusterFromDeployment(from, {}).value();
  TransitionGoal goal = MakeGoal(from, to);
  EXPECT_EQ(KeptAfterLoss(current, goal)["a"], 100);
  auto tight = PlanSurvivingIfPossible(current, to, goal);
  ASSERT_TRUE(tight.ok()) << tight.status().ToString();
  EXPECT_NE(tight->survive_dropped.why.find("service a"), std::string::npos)
      << tight->survive_dropped.why;
  EXPECT_FALSE(tight->goal.survive);
  EXPECT_TRUE(CheckPlan(current, tight->plan, tight->goal).ok());
  EXPECT_FALSE(CheckPlan(current, tight->plan, goal).ok());
  // A spare GPU holds a copy while each whole GPU is repartitioned.
  cluster::AddSpareGpus(1, 8, A100(), &current);
  auto roomy = PlanSurvivingIfPossible(current, to, goal);
  ASSERT_TRUE(roomy.ok()) << roomy.status().ToString();
  EXPECT_EQ(roomy->survive_dropped.why, "");
  SafetyReport report = CheckPlan(current, roomy->plan, goal);
  EXPECT_TRUE(report.ok()) << report.problems.front();
  EXPECT_DOUBLE_EQ(report.worst_after_loss["a"], 100);
}

// A random deployment of `services` on `gpus` GPUs (maximal layouts,
// throughput proportional to size), requiring `fill` of what it provides.
// With `mixed`, odd GPUs are H100s (their replicas 1.5 times as fast) and
// each GPU is placed: A100s on node a-<k>, H100s on node h-<k>.
Deployment RandomDeployment(std::mt19937* rng, int services, int gpus,
                            double fill, bool mixed = false) {
  Deployment d;
  d.gpu = A100().name;
  std::vector<double> provided(services, 0);
  for (int g = 0; g < gpus; ++g) {
    const mig::GpuModel& model = mixed && g % 2 == 1 ? H100() : A100();
    std::vector<mig::Layout> layouts =
        mig::MaximalLayouts(model, mig::MigOptions{});
    deployment::DeployedGpu out;
    out.id = g;
    if (mixed) {
      out.gpu = model.name;
      out.node = fmt::format("{}-{}", &model == &A100() ? "a" : "h", g / 4);
      out.index = (g / 2) % 2;
    }
    const mig::Layout& layout = layouts[(*rng)() % layouts.size()];
    for (const mig::Instance& i : layout.instances()) {
      deployment::PlacedInstance p;
      p.profile = model.profiles[i.profile].name;
      p.start = i.start;
      if ((*rng)() % 5 != 0) {
        int s = static_cast<int>((*rng)() % services);
        p.service = "s" + std::to_string(s);
        p.batch = 8;
        p.credit = model.profiles[i.profile].compute_slices * (100.0 + 10 * s) *
                   (&model == &A100() ? 1 : 1.5);
        provided[s] += p.credit;
      }
      out.instances.push_back(p);
    }
    d.gpus.push_back(out);
  }
  for (int s = 0; s < services; ++s) {
    d.services.push_back({"s" + std::to_string(s), "m",
                          Rate::Of(fill * provided[s]).value(), 0, 0});
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
        cluster::ClusterFromDeployment(from, {4, 12}).value();
    SCOPED_TRACE(seed);
    PlanAndCheck(current, from, to);
  }
}

TEST(PlannerTest, RandomSurvivingTransitionsPassTheAfterLossCheck) {
  // Half surviving a GPU, half a node (of four GPUs); what a transition
  // keeps after a loss is its start's where that is less than the floor.
  int kept = 0, dropped = 0;
  for (int seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    int services = 2 + seed % 3;
    Deployment from = RandomDeployment(&rng, services, 3 + seed % 6, 0.45);
    Deployment to = RandomDeployment(&rng, services, 3 + (seed / 3) % 6, 0.45);
    to.survive =
        workload::Survive{seed % 2 == 0 ? workload::FailureDomain::kGpu
                                        : workload::FailureDomain::kNode,
                          1};
    ClusterState current =
        cluster::ClusterFromDeployment(from, {4, 16}).value();
    SCOPED_TRACE(seed);
    TransitionGoal goal = MakeGoal(from, to);
    auto planned = PlanSurvivingIfPossible(current, to, goal);
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    SafetyReport report = CheckPlan(current, planned->plan, planned->goal);
    EXPECT_TRUE(report.ok()) << report.problems.front();
    if (!planned->survive_dropped.dropped()) {
      ++kept;
      EXPECT_TRUE(planned->goal.survive);
    } else {
      ++dropped;
    }
    if (seed % 2 == 1) continue;
    // Per GPU the target keeps the same wherever its configs go: it is
    // reachable under survive unless it keeps less than the transition must.
    ClusterState end = cluster::ClusterFromDeployment(to, {4, 16}).value();
    std::map<std::string, double> must = KeptAfterLoss(current, goal);
    std::map<std::string, double> has = KeptAfterLoss(end, MakeGoal(to, to));
    bool reachable = true;
    for (const auto& [service, value] : must) {
      reachable &= has[service] >= value - 1e-6;
    }
    EXPECT_EQ(!planned->survive_dropped.dropped(), reachable)
        << planned->survive_dropped.why;
  }
  // Random targets often keep less after a loss than the floors ask.
  EXPECT_EQ(kept, 32);
  EXPECT_EQ(dropped, 28);
}

// Mixed fleets: an A100 pool and an H100 pool, each GPU's layouts judged by
// its own model (the checker applies every action against the GPU's
// model), configs and replicas moving only between GPUs of one model.
TEST(PlannerTest, RandomMixedFleetTransitionsKeepEachGpusModel) {
  for (int seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    int services = 2 + seed % 3;
    Deployment from = RandomDeployment(&rng, services, 8, 0.9, true);
    Deployment to = RandomDeployment(&rng, services, 8, 0.9, true);
    if (seed % 2 == 0) {
      for (auto& g : to.gpus) g.node.reset();  // unplaced: mapped by model
    }
    // Each node has 4 GPUs, two of which the deployments use: spare room of
    // both models.
    cluster::Inventory fleet =
        cluster::ParseInventory(
            "nodes:\n"
            "  - {name: a-0, gpu: A100-SXM4-80GB, gpus: 4}\n"
            "  - {name: a-1, gpu: A100-SXM4-80GB, gpus: 4}\n"
            "  - {name: h-0, gpu: H100-SXM5-80GB, gpus: 4}\n"
            "  - {name: h-1, gpu: H100-SXM5-80GB, gpus: 4}\n",
            "fleet.yaml")
            .value();
    ClusterState current = cluster::PlaceOnInventory(from, fleet).value();
    SCOPED_TRACE(seed);
    TransitionPlan plan = PlanAndCheck(current, from, to);
    for (const cluster::Action& a : plan.actions) {
      EXPECT_EQ(a.at.model, current.FindGpu(a.at.gpu)->model);
      if (a.kind == ActionKind::kMigrate) {
        EXPECT_EQ(a.to.model, a.at.model);
      }
    }
  }
}

TEST(PlannerTest, MixedTargetNeedsGpusOfEachModel) {
  std::mt19937 rng(3);
  Deployment from = RandomDeployment(&rng, 2, 4, 0.5);  // A100s only
  Deployment to = RandomDeployment(&rng, 2, 4, 0.5, true);
  ClusterState current = cluster::ClusterFromDeployment(from, {}).value();
  auto plan = PlanTransition(current, to, MakeGoal(from, to));
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "the target serves on 2 H100-SXM5-80GB GPUs but the cluster has "
            "0 (add --spare-gpus, or GPUs of that model to the inventory)");
}

}  // namespace
}  // namespace migserve::controller
