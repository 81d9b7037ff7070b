#include "controller/safety_checker.h"

#include <gtest/gtest.h>

#include <random>

#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::controller {
namespace {

using cluster::Action;
using cluster::ActionKind;
using cluster::ClusterState;
using cluster::Replica;
using cluster::TransitionPlan;

using testing::A100;
int OneG() { return A100().FindProfile("1g.10gb"); }

// GPUs 0 and 1, each with seven 1g instances; on GPU 0 instances 0..3 serve
// "a" at 100 req/s each, on GPU 1 instance 0 serves "a" at 100.
ClusterState Cluster() {
  ClusterState state;
  for (int g = 0; g < 2; ++g) {
    cluster::GpuState gpu{{"n", g}, &A100(), {}};
    for (int start = 0; start < 7; ++start) {
      std::optional<Replica> replica;
      if ((g == 0 && start < 4) || (g == 1 && start == 0)) {
        replica = Replica{"a", 8, 1, 100, 10};
      }
      gpu.slots.push_back({{OneG(), start}, replica});
    }
    state.gpus.push_back(gpu);
  }
  return state;
}

Action Make(int id, ActionKind kind, int gpu, int start,
            std::vector<int> after = {}) {
  Action a;
  a.id = id;
  a.kind = kind;
  a.at = {{"n", gpu}, &A100(), {OneG(), start}};
  a.replica = {"a", 8, 1, 100, 10};
  a.after = std::move(after);
  return a;
}

TransitionGoal Goal(double before, double after, int gpus = 2) {
  return {{{"a", before}}, {{"a", after}}, gpus, std::nullopt};
}

TEST(SafetyCheckerTest, CreateBeforeDeleteIsSafeOnlyWithTheDependency) {
  TransitionPlan safe{{Make(0, ActionKind::kCreate, 0, 4),
                       Make(1, ActionKind::kDelete, 0, 0, {0})}};
  SafetyReport ok = CheckPlan(Cluster(), safe, Goal(500, 500));
  EXPECT_TRUE(ok.ok()) << ok.problems.front();
  EXPECT_DOUBLE_EQ(ok.worst_capacity["a"], 500);

  // Without `after` some order deletes first: 400 < 500.
  TransitionPlan unsafe{
      {Make(0, ActionKind::kCreate, 0, 4), Make(1, ActionKind::kDelete, 0, 0)}};
  SafetyReport bad = CheckPlan(Cluster(), unsafe, Goal(500, 500));
  ASSERT_FALSE(bad.ok());
  EXPECT_DOUBLE_EQ(bad.worst_capacity["a"], 400);
  EXPECT_NE(bad.problems.front().find("service a can drop to 400"),
            std::string::npos);
  // The floor is min(before, after): shrinking to 400 makes it safe.
  EXPECT_TRUE(CheckPlan(Cluster(), unsafe, Goal(500, 400)).ok());
}

TEST(SafetyCheckerTest, MigratingReplicaDoesNotCountWhileItMoves) {
  Action move = Make(0, ActionKind::kMigrate, 0, 0);
  move.to = {{"n", 1}, &A100(), {OneG(), 3}};
  SafetyReport report =
      CheckPlan(Cluster(), TransitionPlan{{move}}, Goal(500, 500));
  EXPECT_FALSE(report.ok());
  EXPECT_DOUBLE_EQ(report.worst_capacity["a"], 400);
}

TransitionGoal Surviving(TransitionGoal goal) {
  goal.survive = workload::Survive{workload::FailureDomain::kGpu, 1};
  return goal;
}

TEST(SafetyCheckerTest, ALossMidTransitionIsCheckedPerGpu) {
  // "a" keeps 100 after losing GPU 0 (its 400) at the start; moving GPU 1's
  // replica to GPU 0 with a migrate leaves all of it on GPU 0 for a moment.
  EXPECT_EQ(KeptAfterLoss(Cluster(), Surviving(Goal(500, 500)))["a"], 100);
  EXPECT_EQ(KeptAfterLoss(Cluster(), Surviving(Goal(80, 500)))["a"], 80);
  EXPECT_TRUE(KeptAfterLoss(Cluster(), Goal(500, 500)).empty());
  Action away = Make(0, ActionKind::kDelete, 1, 0);
  Action create = Make(1, ActionKind::kCreate, 0, 4);
  TransitionPlan plan{{create, away}};
  SafetyReport floors = CheckPlan(Cluster(), plan, Goal(400, 400));
  EXPECT_TRUE(floors.ok()) << floors.problems.front();
  EXPECT_TRUE(floors.worst_after_loss.empty());
  SafetyReport lossy = CheckPlan(Cluster(), plan, Surviving(Goal(400, 400)));
  ASSERT_FALSE(lossy.ok());
  EXPECT_DOUBLE_EQ(lossy.worst_after_loss["a"], 0);
  EXPECT_NE(lossy.problems.front().find("if gpu n/0 is lost, below the 100"),
            std::string::npos)
      << lossy.problems.front();
  // A create on a third GPU before the delete keeps 100 outside any one.
  Action elsewhere = Make(1, ActionKind::kCreate, 2, 0);
  elsewhere.at.gpu = {"m", 0};
  ClusterState three = Cluster();
  three.gpus.insert(three.gpus.begin(),  // sorted by id
                    {{"m", 0}, &A100(), {{{OneG(), 0}, std::nullopt}}});
  away.after = {1};
  SafetyReport kept = CheckPlan(three, TransitionPlan{{elsewhere, away}},
                                Surviving(Goal(400, 400)));
  EXPECT_TRUE(kept.ok()) << (kept.ok() ? "" : kept.problems.front());
  EXPECT_DOUBLE_EQ(kept.worst_after_loss["a"], 100);
}

TEST(SafetyCheckerTest, FlagsUnorderedActionsOnOneInstance) {
  TransitionPlan plan{
      {Make(0, ActionKind::kDelete, 0, 0), Make(1, ActionKind::kCreate, 0, 0)}};
  SafetyReport report = CheckPlan(Cluster(), plan, Goal(0, 400));
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.problems.front().find("does not order"), std::string::npos);
}

TEST(SafetyCheckerTest, FlagsRepartitionOfInstanceWithReplica) {
  Action a = Make(0, ActionKind::kRepartition, 0, 0);
  a.remove = {{OneG(), 0}, {OneG(), 1}};
  a.add = {{A100().FindProfile("2g.20gb"), 0}};
  SafetyReport report = CheckPlan(Cluster(), TransitionPlan{{a}}, Goal(0, 0));
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.problems.front().find("still serves a"), std::string::npos);
}

TEST(SafetyCheckerTest, FlagsIllegalIntermediateLayout) {
  Action a = Make(0, ActionKind::kRepartition, 0, 5);
  a.remove = {{OneG(), 5}};
  a.add = {{A100().FindProfile("2g.20gb"), 5}};  // 2g may start at 0, 2, 4
  SafetyReport report = CheckPlan(Cluster(), TransitionPlan{{a}}, Goal(0, 0));
  EXPECT_FALSE(report.ok());
}

TEST(SafetyCheckerTest, FlagsShortFinalStateAndTooManyGpus) {
  TransitionPlan plan{{Make(0, ActionKind::kDelete, 0, 0)}};
  SafetyReport report = CheckPlan(Cluster(), plan, Goal(400, 450, 1));
  ASSERT_EQ(report.problems.size(), 2u);
  EXPECT_NE(report.problems[0].find("ends with 400 of 450"), std::string::npos);
  EXPECT_NE(report.problems[1].find("2 GPUs serve"), std::string::npos);
}

// The lowest capacity over every reachable state, and the lowest outside
// one GPU (`gpus`: each GPU's capacity at the start), by enumerating each
// action as not started, started or finished.
std::pair<double, double> BruteForceWorst(const TransitionPlan& plan,
                                          std::map<int, double> gpus) {
  size_t n = plan.actions.size();
  std::vector<int> state(n, 0);
  double initial = 0;
  for (const auto& [g, value] : gpus) initial += value;
  double worst = initial, worst_after_loss = initial;
  size_t total = 1;
  for (size_t k = 0; k < n; ++k) total *= 3;
  for (size_t code = 0; code < total; ++code) {
    size_t c = code;
    for (size_t k = 0; k < n; ++k, c /= 3) state[k] = static_cast<int>(c % 3);
    bool valid = true;
    double capacity = initial;
    std::map<int, double> on = gpus;
    for (size_t k = 0; k < n && valid; ++k) {
      const Action& a = plan.actions[k];
      if (state[k] == 0) continue;
      for (int p : a.after) valid &= state[p] == 2;
      capacity -= a.LossAtStart();
      on[a.at.gpu.index] -= a.LossAtStart();
      if (state[k] == 2) {
        capacity += a.GainAtFinish();
        on[a.GainGpu().index] += a.GainAtFinish();
      }
    }
    if (!valid) continue;
    worst = std::min(worst, capacity);
    for (const auto& [g, value] : on) {
      worst_after_loss = std::min(worst_after_loss, capacity - value);
    }
  }
  return {worst, worst_after_loss};
}

TEST(SafetyCheckerTest, WorstCapacityMatchesBruteForceOverAllOrders) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    // Deletes on GPU 0 instances 0..3, creates on 4..6, a migrate on GPU 1.
    TransitionPlan plan;
    std::vector<Action> actions;
    for (int s = 0; s < 4; ++s)
      actions.push_back(Make(0, ActionKind::kDelete, 0, s));
    for (int s = 4; s < 7; ++s)
      actions.push_back(Make(0, ActionKind::kCreate, 0, s));
    Action move = Make(0, ActionKind::kMigrate, 1, 0);
    move.to = {{"n", 1}, &A100(), {OneG(), 1 + static_cast<int>(rng() % 6)}};
    // Half the trials migrate GPU 0's first replica to GPU 1 instead.
    if (trial % 2 == 1) {
      move = Make(0, ActionKind::kMigrate, 0, 0);
      move.to = {{"n", 1}, &A100(), {OneG(), 1 + static_cast<int>(rng() % 6)}};
      actions.erase(actions.begin());
    }
    actions.push_back(move);
    std::shuffle(actions.begin(), actions.end(), rng);
    for (size_t k = 0; k < actions.size(); ++k) {
      actions[k].id = static_cast<int>(k);
      for (size_t p = 0; p < k; ++p) {
        if (rng() % 4 == 0) actions[k].after.push_back(static_cast<int>(p));
      }
      plan.actions.push_back(actions[k]);
    }
    SafetyReport report = CheckPlan(Cluster(), plan, Surviving(Goal(1, 1)));
    auto [worst, worst_after_loss] =
        BruteForceWorst(plan, {{0, 400}, {1, 100}});
    EXPECT_NEAR(report.worst_capacity["a"], worst, 1e-9) << "trial " << trial;
    EXPECT_NEAR(report.worst_after_loss["a"], worst_after_loss, 1e-9)
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace migserve::controller
