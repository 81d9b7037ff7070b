#include "serving/serve.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::serving {
namespace {

// One 1g replica of `a` (batch 1: 10 ms, so M/D/1 with D = 10 ms) and, for
// service `b`, two 1g replicas with batch 4 and one 3g with batch 8.
class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profiles_ = profile::ParseProfileCsv(
                    "model,gpu,profile,batch,procs,throughput,latency_ms\n"
                    "m,A100-SXM4-80GB,1g.10gb,1,1,100,10\n"
                    "m,A100-SXM4-80GB,1g.10gb,4,1,200,20\n"
                    "m,A100-SXM4-80GB,3g.40gb,1,1,200,5\n"
                    "m,A100-SXM4-80GB,3g.40gb,8,1,800,10\n",
                    "p.csv")
                    .value();
    auto d = deployment::ParseDeployment(R"({"gpu": "A100-SXM4-80GB",
        "gpus": [{"id": 0, "instances": [
          {"profile": "1g.10gb", "start": 0, "service": "a", "batch": 1,
           "throughput": 100},
          {"profile": "1g.10gb", "start": 1, "service": "b", "batch": 4,
           "throughput": 150},
          {"profile": "1g.10gb", "start": 2, "service": "b", "batch": 4,
           "throughput": 150},
          {"profile": "3g.40gb", "start": 4, "service": "b", "batch": 8,
           "throughput": 600}]}]})",
                                         "d.json")
                 .value();
    state_ = cluster::ClusterFromDeployment(d, {8, 0}).value();
  }

  workload::Workload Workload(double a_rate, double b_rate) {
    return workload::ParseWorkload(
               fmt::format("gpu: A100-SXM4-80GB\nservices:\n"
                           "  - {{name: a, model: m, throughput: {}, "
                           "latency_ms: 100}}\n"
                           "  - {{name: b, model: m, throughput: {}, "
                           "latency_ms: 50}}\n",
                           a_rate, b_rate),
               "w.yaml")
        .value();
  }

  profile::ProfileTable profiles_;
  cluster::ClusterState state_;
};

TEST_F(ServeTest, AnIdleReplicaAnswersInItsBatchTime) {
  ServeOptions o;
  o.duration_s = 2000;
  o.warmup_s = 0;
  auto r = Serve(state_, Workload(0.05, 0.05), profiles_, o).value();
  const ServiceServing& a = r.services[0];
  EXPECT_GT(a.requests, 60);
  EXPECT_NEAR(a.p50_ms, 10, 1e-6);
  EXPECT_NEAR(a.p99_ms, 10, 1e-6);
  EXPECT_DOUBLE_EQ(a.within_slo, 1);
  // b's replicas answer a lone request in their batch-1 time: 10 or 5 ms.
  EXPECT_GE(r.services[1].p50_ms, 5);
  EXPECT_LE(r.services[1].p99_ms, 10);
  EXPECT_TRUE(r.ok());
}

// M/D/1: the mean latency is D + rho D / (2 (1 - rho)) (Pollaczek-
// Khinchine); nothing is lost and a stable queue serves what is offered.
TEST_F(ServeTest, MD1MeanLatencyIsPollaczekKhinchine) {
  ServeOptions o;
  o.duration_s = 3000;
  o.warmup_s = 100;
  for (double rho : {0.5, 0.8}) {
    auto r = Serve(state_, Workload(100 * rho, 100), profiles_, o).value();
    const ServiceServing& a = r.services[0];
    double expected = 10 + rho * 10 / (2 * (1 - rho));
    EXPECT_NEAR(a.mean_ms, expected, 0.03 * expected) << rho;
    EXPECT_EQ(a.served, a.arrived);
    EXPECT_NEAR(a.achieved, a.offered, 0.02 * a.offered);
    EXPECT_TRUE(a.stable);
    EXPECT_DOUBLE_EQ(a.utilization, rho);
  }
}

TEST_F(ServeTest, AnOverloadedServiceIsUnstableAndServesItsSaturation) {
  ServeOptions o;
  o.duration_s = 200;
  auto r = Serve(state_, Workload(150, 100), profiles_, o).value();
  const ServiceServing& a = r.services[0];
  EXPECT_FALSE(a.stable);
  EXPECT_FALSE(a.ok());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(a.served, a.arrived);  // drained at the end, nothing lost
  EXPECT_NEAR(a.achieved, 100, 2);
  EXPECT_DOUBLE_EQ(a.saturation, 100);
}

// b's weights are 300 and 600 (two 1g at 150, one 3g at 600): the 3g gets
// two thirds of the requests, saturating (800/s) at 1200/s for the service;
// the 1g replicas (200/s each) at 1200/s too. Round robin gives each a
// third: the 1g replicas saturate at 600/s.
TEST_F(ServeTest, SaturationFollowsTheRoutingPolicy) {
  ServeOptions o;
  o.duration_s = 20;
  o.warmup_s = 2;
  auto weighted = Serve(state_, Workload(10, 500), profiles_, o).value();
  EXPECT_DOUBLE_EQ(weighted.services[1].saturation, 1200);
  EXPECT_TRUE(weighted.services[1].ok());
  o.routing = RoutingPolicy::kRoundRobin;
  auto rr = Serve(state_, Workload(10, 500), profiles_, o).value();
  EXPECT_DOUBLE_EQ(rr.services[1].saturation, 600);
  EXPECT_GT(rr.services[1].p99_ms, weighted.services[1].p99_ms);
  o.routing = RoutingPolicy::kLeastOutstanding;
  auto lo = Serve(state_, Workload(10, 500), profiles_, o).value();
  EXPECT_DOUBLE_EQ(lo.services[1].saturation, 1200);
  EXPECT_TRUE(lo.services[1].ok());
}

// Two 1g replicas of `a` (batch 1: 100 req/s each) whose groups differ in
// credit alone, 50 against 150 (mid-transition): the route sends them a
// quarter and three quarters of the requests, and at 120 req/s the second
// works at 90% (M/D/1: a mean of ~55 ms) where an even split (60%)
// gives ~17.5 ms. Sharing replicas between the groups (matching them on
// anything less than every field) would split evenly.
TEST_F(ServeTest, GroupsThatDifferInCreditAloneKeepTheirOwnReplicas) {
  auto state_with = [](int first, int second) {
    auto d =
        deployment::ParseDeployment(fmt::format(R"({{"gpu": "A100-SXM4-80GB",
        "gpus": [{{"id": 0, "instances": [
          {{"profile": "1g.10gb", "start": 0, "service": "a", "batch": 1,
           "throughput": {}}},
          {{"profile": "1g.10gb", "start": 1, "service": "a", "batch": 1,
           "throughput": {}}}]}}]}})",
                                                first, second),
                                    "d.json")
            .value();
    return cluster::ClusterFromDeployment(d, {8, 0}).value();
  };
  ServeOptions o;
  o.routing = RoutingPolicy::kWeighted;
  o.duration_s = 400;
  o.warmup_s = 20;
  auto skewed =
      Serve(state_with(50, 150), Workload(120, 0.01), profiles_, o).value();
  auto even =
      Serve(state_with(100, 100), Workload(120, 0.01), profiles_, o).value();
  EXPECT_GT(skewed.services[0].mean_ms, 35);
  EXPECT_LT(even.services[0].mean_ms, 25);
}

TEST_F(ServeTest, DeterministicForASeedAndBurstierArrivalsWaitLonger) {
  ServeOptions o;
  o.duration_s = 200;
  auto one = Serve(state_, Workload(70, 700), profiles_, o).value();
  auto again = Serve(state_, Workload(70, 700), profiles_, o).value();
  EXPECT_EQ(one.services[0].p99_ms, again.services[0].p99_ms);
  EXPECT_EQ(one.services[1].arrived, again.services[1].arrived);
  o.seed = 2;
  auto other = Serve(state_, Workload(70, 700), profiles_, o).value();
  EXPECT_NE(one.services[1].arrived, other.services[1].arrived);
  o.seed = 1;
  o.arrivals = {queueing::ArrivalProcess::Kind::kGamma, 2};
  auto bursty = Serve(state_, Workload(70, 700), profiles_, o).value();
  EXPECT_GT(bursty.services[0].p99_ms, 1.5 * one.services[0].p99_ms);
}

TEST_F(ServeTest, RefusesBadOptionsAndReplicasItCannotTime) {
  ServeOptions o;
  o.warmup_s = 30;
  EXPECT_FALSE(Serve(state_, Workload(1, 1), profiles_, o).ok());
  o = {};
  o.arrivals.cv = 0;
  EXPECT_FALSE(Serve(state_, Workload(1, 1), profiles_, o).ok());
  o = {};
  profile::ProfileTable partial = profiles_;
  partial.rows.pop_back();
  auto r = Serve(state_, Workload(1, 1), partial, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("batch 8"), std::string::npos)
      << r.status().message();
  auto w = Workload(1, 1);
  w.services.pop_back();
  r = Serve(state_, w, profiles_, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'b'"), std::string::npos);
}

// A service that runs long is not silent: with a due time of 0 every check
// (each 65,536 arrivals) reports how far the simulated clock is, then each
// service reports its result once, in order.
TEST_F(ServeTest, ReportsProgressWhileAServiceRuns) {
  ServeOptions o;
  o.duration_s = 400;  // b: 500 req/s, 200,000 arrivals: 3 checks
  std::vector<std::string> lines;
  ServeProgressSink progress;
  progress.every_s = 0;
  progress.report = [&](const ServeProgress& p) {
    lines.push_back(fmt::format(
        "{} {}/{} {}", p.service, p.index, p.total,
        p.done ? fmt::format("done {}", p.done->arrived)
               : fmt::format("at {}",
                             p.simulated_s > 0 && p.simulated_s < o.duration_s
                                 ? "inside"
                                 : "outside")));
  };
  auto r = Serve(state_, Workload(10, 500), profiles_, o, progress).value();
  EXPECT_EQ(lines, (std::vector<std::string>{
                       fmt::format("a 1/2 done {}", r.services[0].arrived),
                       "b 2/2 at inside", "b 2/2 at inside", "b 2/2 at inside",
                       fmt::format("b 2/2 done {}", r.services[1].arrived)}));
}

}  // namespace
}  // namespace migserve::serving
