#include "queueing/p99_capacity.h"

#include <gtest/gtest.h>

#include <cmath>

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
    EXPECT_NEAR(capacity, expected, 0.03 * expected) << "SLO " << slo_ms;
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
  // At the capacity the p99 holds; a step above it does not.
  EXPECT_LE(LatencyQuantileMs(curve, {.max_batch = 8}, eight, 1), 100);
  EXPECT_GT(
      LatencyQuantileMs(curve, {.max_batch = 8}, eight + 0.004 * 8 / 0.024, 1),
      100);
}

// A replica fed every k-th request of a larger stream sees smoother
// arrivals than Poisson and keeps its p99 at a higher rate.
TEST(QuantileCapacityTest, ReplicasSplitFromALargerStreamSeeErlangArrivals) {
  EXPECT_EQ(ErlangOrder(100, 0), 1);
  EXPECT_EQ(ErlangOrder(100, 150), 1);
  EXPECT_EQ(ErlangOrder(100, 500), 4);
  EXPECT_EQ(ErlangOrder(100, 1100), 8);
  EXPECT_EQ(ErlangOrder(100, 1e6), 64);
  BatchCurve curve({{1, 10}, {2, 12}, {4, 16}, {8, 24}});
  double alone = QuantileCapacity(curve, {.max_batch = 8}, 60);
  double shared = QuantileCapacity(curve, {.max_batch = 8}, 60, 20 * alone);
  EXPECT_GT(shared, 1.05 * alone);
  EXPECT_LT(shared, 8 / 0.024);
  EXPECT_LT(LatencyQuantileMs(curve, {.max_batch = 8}, alone, 16),
            LatencyQuantileMs(curve, {.max_batch = 8}, alone, 1));
}

}  // namespace
}  // namespace migserve::queueing
