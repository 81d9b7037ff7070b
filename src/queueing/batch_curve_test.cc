#include "queueing/batch_curve.h"

#include <gtest/gtest.h>

#include "profile/profile_csv.h"

namespace migserve::queueing {
namespace {

TEST(BatchCurveTest, InterpolatesBetweenMeasuredBatches) {
  BatchCurve c({{2, 10}, {4, 14}, {8, 30}});
  EXPECT_DOUBLE_EQ(c.Ms(1), 10);  // never faster than the smallest measured
  EXPECT_DOUBLE_EQ(c.Ms(2), 10);
  EXPECT_DOUBLE_EQ(c.Ms(3), 12);
  EXPECT_DOUBLE_EQ(c.Ms(4), 14);
  EXPECT_DOUBLE_EQ(c.Ms(6), 22);
  EXPECT_DOUBLE_EQ(c.Ms(8), 30);
  EXPECT_DOUBLE_EQ(c.Ms(10), 38);  // the last segment's slope
  EXPECT_DOUBLE_EQ(BatchCurve({{4, 7}}).Ms(9), 7);
}

TEST(BatchCurveTest, ABatchTakesTheLongerOfLatencyAndWhatThroughputImplies) {
  profile::ProfileRow row;
  row.batch = 4;
  row.procs = 2;
  row.throughput = 400;
  row.latency_ms = 15;
  EXPECT_DOUBLE_EQ(BatchMs(row), 20);  // 2 x 4 / 400 s
  row.latency_ms = 25;
  EXPECT_DOUBLE_EQ(BatchMs(row), 25);
}

TEST(BatchCurveTest, ARowsCurveHoldsItsOwnPointAndSmallerBatches) {
  auto t = profile::ParseProfileCsv(
      "model,gpu,profile,batch,procs,throughput,latency_ms\n"
      "m,A100-SXM4-80GB,1g.10gb,1,1,100,10\n"
      "m,A100-SXM4-80GB,1g.10gb,4,1,200,20\n"
      "m,A100-SXM4-80GB,1g.10gb,8,1,250,32\n"
      "m,A100-SXM4-80GB,1g.10gb,2,2,150,30\n"
      "m,A100-SXM4-80GB,2g.20gb,2,1,300,5\n"
      "n,A100-SXM4-80GB,1g.10gb,2,1,300,5\n",
      "p.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  BatchCurve c = BatchCurve::Of(*t, t->rows[1]);
  EXPECT_EQ(c.points(), (std::vector<BatchCurve::Point>{{1, 10}, {4, 20}}));
  c = BatchCurve::Of(*t, t->rows[2]);
  EXPECT_EQ(c.points().size(), 3u);
  EXPECT_DOUBLE_EQ(c.Ms(8), 32);
  c = BatchCurve::Of(*t, t->rows[3]);
  EXPECT_EQ(c.points(), (std::vector<BatchCurve::Point>{{2, 30}}));
}

}  // namespace
}  // namespace migserve::queueing
