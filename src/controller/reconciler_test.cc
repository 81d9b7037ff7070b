#include "controller/reconciler.h"

#include <gtest/gtest.h>

#include "cluster/router.h"
#include "cluster/routing.h"
#include "cluster/simulated_cluster.h"
#include "controller/degraded_target.h"
#include "deployment/deployment_json.h"
#include "deployment/testing/shipped.h"
#include "mig/gpu_catalog.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

using testing::ShippedDeployment;

TEST(ReconcilerTest, IdlesAtTheTargetAndMovesWhenItChanges) {
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  cluster::SimulatedCluster sim(
      cluster::ClusterFromDeployment(day, {8, 24}).value());
  auto journal = Journal::Open(":memory:").value();
  Reconciler reconciler(&sim, journal.get());
  ASSERT_TRUE(reconciler.Reconcile(day).ok());
  EXPECT_EQ(reconciler.Progress()["state"], "idle");
  EXPECT_TRUE(sim.timeline().empty());
  ASSERT_TRUE(reconciler.Reconcile(night).ok());
  TransitionGoal goal = MakeGoal(day, night);
  for (const auto& [service, required] : goal.required_after) {
    EXPECT_GE(sim.min_capacity().at(service), goal.Floor(service) - 1e-6)
        << service;
    EXPECT_GE(sim.state().Capacity()[service], required - 1e-6) << service;
  }
  std::string metrics = reconciler.Metrics();
  EXPECT_NE(metrics.find("migserve_reconciles_total{result=\"idle\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("migserve_reconciles_total{result=\"ok\"} 1"),
            std::string::npos);
  EXPECT_NE(
      metrics.find("migserve_actions_total{kind=\"delete\",result=\"ok\"} 75"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("migserve_actions_running 0"), std::string::npos);
  nlohmann::json progress = reconciler.Progress();
  EXPECT_EQ(progress["state"], "idle");
  EXPECT_EQ(progress["plans"], 1);
  EXPECT_FALSE(progress["log"].empty());
  ASSERT_TRUE(reconciler.Reconcile(night).ok());
  EXPECT_NE(
      reconciler.Metrics().find("migserve_reconciles_total{result=\"idle\"} 2"),
      std::string::npos);
}

// The live routes, as a router holds them: a write that changes nothing
// says so.
class LiveRoutes : public cluster::Router {
 public:
  StatusOr<bool> SetRoute(const cluster::ServiceRoute& route) override {
    auto [it, fresh] = live.try_emplace(route.service, route);
    if (!fresh && it->second == route) return false;
    it->second = route;
    return true;
  }
  std::map<std::string, cluster::ServiceRoute> live;
};

// At the target, routes are kept as pods are (issue 91: a stale leader's
// route write that landed after the transition routed a service at 0, and
// a reconcile loop changed nothing): an idle reconcile rewrites a route
// that differs from the cluster's ready replicas, says so, and leaves the
// others unwritten.
TEST(ReconcilerTest, AnIdleReconcileRepairsARouteThatDrifted) {
  deployment::Deployment day = ShippedDeployment("day");
  cluster::SimulatedCluster sim(
      cluster::ClusterFromDeployment(day, {8, 24}).value());
  auto journal = Journal::Open(":memory:").value();
  LiveRoutes router;
  std::vector<std::string> log;
  ControllerOptions options;
  options.router = &router;
  options.progress = [&](const std::string& line) { log.push_back(line); };
  Reconciler reconciler(&sim, journal.get(), options);
  ASSERT_TRUE(reconciler.Reconcile(day).ok());
  const std::map<std::string, cluster::ServiceRoute> want =
      cluster::Routes(sim.state());
  EXPECT_EQ(router.live, want);
  // A late write routes bert-1 at nothing; another service is untouched.
  router.live["bert-1"] = {"bert-1", {}};
  log.clear();
  ASSERT_TRUE(reconciler.Reconcile(day).ok());
  EXPECT_EQ(reconciler.Progress()["state"], "idle");
  EXPECT_EQ(router.live, want);
  EXPECT_GT(cluster::RoutedCapacity(router.live["bert-1"]), 1881);
  EXPECT_TRUE(sim.timeline().empty());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0],
            "controller: repaired the routes of bert-1: they differed from "
            "the cluster's ready replicas");
}

TEST(ReconcilerTest, ReportsAnImpossibleTargetAsAnError) {
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  cluster::SimulatedCluster sim(
      cluster::ClusterFromDeployment(night, {8, 0}).value());
  auto journal = Journal::Open(":memory:").value();
  Reconciler reconciler(&sim, journal.get());
  EXPECT_TRUE(reconciler.Health().ok());  // starting
  // day on H100s: the cluster has none (a mistake, not a loss: nothing of
  // it fits, so it is refused rather than degraded to nothing).
  deployment::Deployment h100 = day;
  h100.gpu = "H100-SXM5-80GB";
  EXPECT_FALSE(reconciler.Reconcile(h100).ok());
  EXPECT_EQ(reconciler.Progress()["state"], "error");
  EXPECT_NE(
      reconciler.Progress()["last_error"].get<std::string>().find("spare"),
      std::string::npos)
      << reconciler.Progress().dump();
  // What /healthz answers: the failure, until a reconcile succeeds.
  Status health = reconciler.Health();
  EXPECT_EQ(health.code(), Status::Code::kUnavailable);
  EXPECT_NE(health.message().find("the last reconcile failed: "),
            std::string::npos)
      << health.message();
  ASSERT_TRUE(reconciler.Reconcile(night).ok());
  EXPECT_TRUE(reconciler.Health().ok());
  // night's layout asking 100 x a service's rate: nothing to do, and short.
  deployment::Deployment more = night;
  more.services[0].throughput =
      Rate::Of(more.services[0].throughput.value() * 100).value();
  Status short_of = reconciler.Reconcile(more);
  EXPECT_EQ(short_of.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(short_of.message().find("the cluster holds the target, but "
                                    "service " +
                                    night.services[0].name + " ends with"),
            std::string::npos)
      << short_of.message();
  EXPECT_EQ(reconciler.Progress()["state"], "error");
}

// A target changed mid-transition (day to night, then back to day after 30
// actions have started): the transition starts nothing more, its running
// actions end, and the reconciler moves from what is there to the newest
// target. No service goes below min(the stopped transition's floor, the
// newest requirement) at any moment, and the cluster ends at day.
TEST(ReconcilerTest, ATargetChangedMidTransitionStopsItAndIsTakenAtOnce) {
  deployment::Deployment day = ShippedDeployment("day"),
                         night = ShippedDeployment("night");
  cluster::SimulatedCluster sim(
      cluster::ClusterFromDeployment(day, {8, 24}).value());
  auto journal = Journal::Open(":memory:").value();
  size_t started_at_change = 0;
  ControllerOptions options;
  options.superseded = [&] {
    if (started_at_change > 0 || sim.timeline().size() < 30) return false;
    started_at_change = sim.timeline().size();
    return true;
  };
  Reconciler reconciler(&sim, journal.get(), options);
  ASSERT_TRUE(reconciler.Reconcile(day).ok());
  ASSERT_TRUE(reconciler.Reconcile(night).ok());
  ASSERT_EQ(started_at_change, 30u);
  EXPECT_EQ(sim.timeline().size(), started_at_change);  // nothing more
  EXPECT_TRUE(sim.Running().empty());
  EXPECT_NE(reconciler.Metrics().find(
                "migserve_reconciles_total{result=\"superseded\"} 1"),
            std::string::npos);
  EXPECT_NE(EndStateProblems(sim.state(), MakeGoal(day, night)),
            std::vector<std::string>{});  // not at night
  ASSERT_TRUE(reconciler.Reconcile(day).ok());
  EXPECT_GT(sim.timeline().size(), started_at_change);
  TransitionGoal there = MakeGoal(day, night), back = MakeGoal(night, day);
  for (const auto& [service, required] : there.required_before) {
    double floor = std::min(there.Floor(service), back.Floor(service));
    EXPECT_GE(sim.min_capacity().at(service), floor - 1e-6) << service;
    EXPECT_GE(sim.state().Capacity()[service], required - 1e-6) << service;
  }
  EXPECT_EQ(EndStateProblems(sim.state(), MakeGoal(night, day)),
            std::vector<std::string>{});
  EXPECT_NE(
      reconciler.Metrics().find("migserve_reconciles_total{result=\"ok\"} 1"),
      std::string::npos);
}

// Night on 20 GPUs of three nodes, node-1's 8 to be lost at 60 s.
struct NodeLost {
  NodeLost() {
    start = cluster::ClusterFromDeployment(ShippedDeployment("night"), {8, 20})
                .value();
    for (const cluster::GpuState& g : start.gpus) {
      if (g.id.node == "node-1") node1.push_back(g);
    }
    faults.lose_node = "node-1";
    faults.lose_at_s = 60;
  }
  cluster::ClusterState start;
  std::vector<cluster::GpuState> node1;
  cluster::Faults faults;
};

// A node lost mid-transition (night to day on 20 GPUs; node-1's 8 go at
// 60 s) leaves 12 GPUs for day's 18: the reconciler ends at the part of day
// that fits, every service at what that part serves, says so (healthz,
// metrics, progress), and moves to the whole of day when the node comes
// back.
TEST(ReconcilerTest, ANodeLostMidTransitionEndsAtWhatFitsAndReturns) {
  deployment::Deployment day = ShippedDeployment("day");
  NodeLost lost;
  ASSERT_EQ(lost.node1.size(), 8u);
  cluster::SimulatedCluster sim(lost.start, {}, 1, lost.faults);
  auto journal = Journal::Open(":memory:").value();
  Reconciler reconciler(&sim, journal.get());
  ASSERT_TRUE(reconciler.Reconcile(day).ok()) << reconciler.Progress().dump();
  ASSERT_EQ(sim.state().gpus.size(), 12u);
  std::optional<DegradedTarget> fit = FitTarget(sim.state(), day);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->dropped_gpus, day.UsedGpus() - 12);
  EXPECT_EQ(
      EndStateProblems(sim.state(), MakeGoal(fit->deployment, fit->deployment)),
      std::vector<std::string>{});
  Status health = reconciler.Health();
  EXPECT_EQ(health.code(), Status::Code::kUnavailable);
  EXPECT_EQ(health.message(), "degraded: " + fit->description);
  EXPECT_NE(reconciler.Metrics().find("\nmigserve_degraded 1\n"),
            std::string::npos);
  EXPECT_EQ(reconciler.Progress()["degraded"], fit->description);
  sim.AddGpus(lost.node1);
  ASSERT_TRUE(reconciler.Reconcile(day).ok()) << reconciler.Progress().dump();
  EXPECT_TRUE(reconciler.Health().ok()) << reconciler.Health().message();
  EXPECT_NE(reconciler.Metrics().find("\nmigserve_degraded 0\n"),
            std::string::npos);
  EXPECT_TRUE(reconciler.Progress()["degraded"].is_null());
  EXPECT_EQ(
      EndStateProblems(sim.state(), MakeGoal(ShippedDeployment("night"), day)),
      std::vector<std::string>{});
}

// A controller restarted while degraded (a new process on the same
// journal) knows it from the journal: it says nothing new while the cluster
// stays short, reports degraded, and says Recovered when the GPUs return.
TEST(ReconcilerTest, ARestartedControllerSaysRecoveredForItsPredecessor) {
  deployment::Deployment day = ShippedDeployment("day");
  NodeLost lost;
  cluster::SimulatedCluster sim(lost.start, {}, 1, lost.faults);
  auto journal = Journal::Open(":memory:").value();
  std::vector<std::string> events;
  ControllerOptions options;
  options.event = [&](EventType type, const std::string& reason,
                      const std::string&) {
    events.push_back(std::string(EventTypeName(type)) + " " + reason);
  };
  {
    Reconciler first(&sim, journal.get(), options);
    ASSERT_TRUE(first.Reconcile(day).ok()) << first.Progress().dump();
  }
  EXPECT_EQ(events, std::vector<std::string>{"Warning Degraded"});
  std::string said = journal->Degraded().value();
  EXPECT_NE(said, "");
  Reconciler second(&sim, journal.get(), options);
  ASSERT_TRUE(second.Reconcile(day).ok()) << second.Progress().dump();
  EXPECT_EQ(events, std::vector<std::string>{"Warning Degraded"});
  EXPECT_EQ(second.Health().message(), "degraded: " + said);
  sim.AddGpus(lost.node1);
  ASSERT_TRUE(second.Reconcile(day).ok()) << second.Progress().dump();
  EXPECT_EQ(events,
            (std::vector<std::string>{"Warning Degraded", "Normal Recovered"}));
  EXPECT_EQ(journal->Degraded().value(), "");
  EXPECT_TRUE(second.Health().ok());
}

// A service name cannot end its label value or add a line: quote,
// backslash and line feed are escaped as Prometheus's text format says.
TEST(ReconcilerTest, EscapesServiceNamesInMetrics) {
  deployment::Deployment night = ShippedDeployment("night");
  const std::string name = night.services[0].name;
  const std::string evil = "x\"} 1\nmigserve_injected 1\n# \\";
  night.services[0].name = evil;
  for (deployment::DeployedGpu& g : night.gpus) {
    for (deployment::PlacedInstance& i : g.instances) {
      if (i.service == name) i.service = evil;
    }
  }
  cluster::SimulatedCluster sim(
      cluster::ClusterFromDeployment(night, {8, 0}).value());
  auto journal = Journal::Open(":memory:").value();
  Reconciler reconciler(&sim, journal.get());
  ASSERT_TRUE(reconciler.Reconcile(night).ok());
  std::string metrics = reconciler.Metrics();
  EXPECT_NE(metrics.find("migserve_service_required{service=\"x\\\"} "
                         "1\\nmigserve_injected 1\\n# \\\\\"} "),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("\nmigserve_injected"), std::string::npos);
}

}  // namespace
}  // namespace migserve::controller
