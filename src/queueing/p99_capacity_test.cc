#include "queueing/p99_capacity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "queueing/arrivals.h"
#include "queueing/md1_test_util.h"

namespace migserve::queueing {
namespace {

using testing::MD1WaitCdf;

TEST(QuantileCapacityTest, QuantileIsByNearestRank) {
  std::vector<double> v{5, 1, 4, 2, 3, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(Quantile(&v, 0.99), 10);
  EXPECT_DOUBLE_EQ(Quantile(&v, 0.5), 5);
  EXPECT_DOUBLE_EQ(Quantile(&v, 0.9), 9);
  std::vector<double> empty;
  EXPECT_DOUBLE_EQ(Quantile(&empty, 0.5), 0);
}

// Batch 1, one process: the highest load at which the p99 latency (wait +
// D) is within the SLO solves P(wait <= SLO / D - 1) = 0.99 in closed form.
TEST(QuantileCapacityTest, MD1CapacityMatchesErlangsDistribution) {
  const double d_ms = 10;
  BatchCurve curve({{1, d_ms}});
  for (double slo_ms : {25.0, 50.0, 80.0}) {
    double t = slo_ms / d_ms - 1;
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; ++i) {
      double mid = (lo + hi) / 2;
      (MD1WaitCdf(mid, t) >= 0.99 ? lo : hi) = mid;
    }
    double expected = lo * 1000 / d_ms;
    double capacity = QuantileCapacity(curve, {.max_batch = 1}, slo_ms);
    // The search errs on the safe side by the margins of its verdicts.
    EXPECT_NEAR(capacity, expected, 0.04 * expected) << "SLO " << slo_ms;
    EXPECT_LE(capacity, expected * 1.005) << "SLO " << slo_ms;
  }
}

TEST(QuantileCapacityTest, NothingWhenALoneRequestMissesTheSlo) {
  BatchCurve curve({{1, 30}, {8, 60}});
  EXPECT_EQ(QuantileCapacity(curve, {.max_batch = 8}, 25), 0);
}

TEST(QuantileCapacityTest, BatchingAndProcessesRaiseCapacityBelowSaturation) {
  BatchCurve curve({{1, 10}, {2, 12}, {4, 16}, {8, 24}});
  double one = QuantileCapacity(curve, {.max_batch = 1}, 100);
  double eight = QuantileCapacity(curve, {.max_batch = 8}, 100);
  double two_procs =
      QuantileCapacity(curve, {.max_batch = 1, .workers = 2}, 100);
  EXPECT_LT(one, 100);  // saturation: 1 / 10 ms
  EXPECT_GT(one, 70);
  EXPECT_GT(eight, 2.5 * one);
  EXPECT_LT(eight, 8 / 0.024);
  EXPECT_GT(two_procs, 1.8 * one);
  EXPECT_LT(two_procs, 200);
  // Cached: the same answer again.
  EXPECT_EQ(QuantileCapacity(curve, {.max_batch = 8}, 100), eight);
  // At the capacity the p99 holds over two million requests; 3% of
  // saturation above it, it does not.
  QuantileSearch longer{.requests = 2000000};
  EXPECT_LE(LatencyQuantileMs(curve, {.max_batch = 8}, eight, {}, longer), 100);
  EXPECT_GT(LatencyQuantileMs(curve, {.max_batch = 8}, eight + 0.03 * 8 / 0.024,
                              {}, longer),
            100);
}

// A replica fed every k-th request of a larger stream sees smoother
// arrivals than Poisson and keeps its p99 at a higher rate.
TEST(QuantileCapacityTest, ReplicasSplitFromALargerStreamSeeErlangArrivals) {
  auto every = [](double rate, double service_rate) {
    return ShapeAt({.service_rate = service_rate}, rate).every;
  };
  EXPECT_EQ(every(100, 0), 1);
  EXPECT_EQ(every(100, 150), 1);
  EXPECT_EQ(every(100, 500), 5);
  EXPECT_EQ(every(100, 1100), 11);
  EXPECT_EQ(every(100, 1750), 16);
  EXPECT_EQ(every(100, 1950), 18);
  EXPECT_EQ(every(100, 1e6), 64);
  BatchCurve curve({{1, 10}, {2, 12}, {4, 16}, {8, 24}});
  double alone = QuantileCapacity(curve, {.max_batch = 8}, 60);
  double shared = QuantileCapacity(curve, {.max_batch = 8}, 60,
                                   {.service_rate = 20 * alone});
  EXPECT_GT(shared, 1.05 * alone);
  EXPECT_LT(shared, 8 / 0.024);
  EXPECT_LT(LatencyQuantileMs(curve, {.max_batch = 8}, alone, {.every = 16}),
            LatencyQuantileMs(curve, {.max_batch = 8}, alone, {}));
}

// Each router's credit, for the same replica in a service of 20 such: one
// proxy's rotation is the smoothest, two proxies' rotations interleaved at
// random less so, and a random split (gateway-api's bound, random) is
// Poisson, the least credit; burstier gaps (cv 2) cost credit under every
// router.
TEST(QuantileCapacityTest, CreditsFollowTheRouterAndTheBurstiness) {
  BatchCurve curve({{1, 10}, {2, 12}, {4, 16}, {8, 24}});
  auto credit = [&](RouterKind router, int proxies, double cv) {
    double alone = QuantileCapacity(curve, {.max_batch = 8}, 60);
    return QuantileCapacity(curve, {.max_batch = 8}, 60,
                            {.service_rate = 20 * alone,
                             .cv = cv,
                             .router = router,
                             .router_replicas = proxies});
  };
  double one_proxy = credit(RouterKind(), 1, 1);
  double two_proxies = credit(RouterKind(), 2, 1);
  double gateway = credit(*ParseRouter("gateway-api"), 1, 1);
  double random = credit(*ParseRouter("random"), 1, 1);
  EXPECT_GT(one_proxy, two_proxies);
  EXPECT_GT(two_proxies, 1.02 * random);
  EXPECT_EQ(gateway, random);
  EXPECT_EQ(random, QuantileCapacity(curve, {.max_batch = 8}, 60));
  EXPECT_LT(credit(RouterKind(), 2, 2), two_proxies);
  EXPECT_LT(credit(*ParseRouter("random"), 1, 2), random);
}

// A replica's arrivals behind a router have unit rate and the burstiness
// the shape implies: two rotations interleaved at random have gaps of
// squared cv between one rotation's (1/k) and Poisson's (1).
TEST(QuantileCapacityTest, ShapedArrivalsHaveUnitRateAndTheirShapesSpread) {
  auto squared_cv = [](const ArrivalShape& shape) {
    ShapedStream stream(shape, 7);
    std::vector<double> t(200000);
    for (double& at : t) at = stream.Next();
    double sum = 0;
    double sum2 = 0;
    for (size_t i = 1; i < t.size(); ++i) {
      double gap = t[i] - t[i - 1];
      sum += gap;
      sum2 += gap * gap;
    }
    double n = t.size() - 1;
    double mean = sum / n;
    EXPECT_NEAR(mean, 1, 0.01);
    return sum2 / n / (mean * mean) - 1;
  };
  EXPECT_NEAR(squared_cv({}), 1, 0.03);
  EXPECT_NEAR(squared_cv({.every = 8}), 1.0 / 8, 0.01);
  double two = squared_cv({.channels = 2, .every = 8});
  EXPECT_GT(two, 0.3);
  EXPECT_LT(two, 0.9);
  EXPECT_NEAR(squared_cv({.cv = 2}), 4, 0.2);
  // Thinning a cv-2 stream to 1 in 8: 1 + (4 - 1) / 8.
  EXPECT_NEAR(squared_cv({.cv = 2, .thin = 8}), 1 + 3.0 / 8, 0.1);
}

}  // namespace
}  // namespace migserve::queueing
