#include "queueing/capacity_model.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "queueing/p99_capacity.h"

namespace migserve::queueing {
namespace {

using profile::ProfileRow;

class CapacityModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = profile::ParseProfileCsv(
        "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n"
        "m,A100-SXM4-80GB,1g.10gb,1,1,100,5,\n"
        "m,A100-SXM4-80GB,1g.10gb,8,1,300,40,\n"
        "m,A100-SXM4-80GB,1g.10gb,16,1,350,90,\n"
        "m,A100-SXM4-80GB,1g.10gb,8,2,380,60,\n"
        "m,A100-SXM4-80GB,1g.10gb,32,1,500,30,12\n",
        "p.csv");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table_ = *t;
  }
  ServiceTerms Paper(double limit, int procs) {
    return {{limit, procs}, limit, {}, CapacityModel::kPaper};
  }
  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  int g1_ = gpu_.FindProfile("1g.10gb");
  profile::ProfileTable table_;
};

TEST_F(CapacityModelTest, NamesAreP99AndPaper) {
  EXPECT_EQ(ParseCapacityModel("p99"), CapacityModel::kP99);
  EXPECT_EQ(ParseCapacityModel("paper"), CapacityModel::kPaper);
  EXPECT_FALSE(ParseCapacityModel("P99"));
  EXPECT_EQ(CapacityModelName(CapacityModel::kP99), "p99");
  EXPECT_EQ(CapacityModelName(CapacityModel::kPaper), "paper");
}

TEST_F(CapacityModelTest, PaperCreditsTheBestThroughputWithinTheLimits) {
  // The 500/s row needs 12 GB, more than 1g.10gb's 9.5.
  Credit c = BestCredit(table_, gpu_, g1_, "m", Paper(100, 1));
  ASSERT_NE(c.row, nullptr);
  EXPECT_EQ(c.row->batch, 16);
  EXPECT_DOUBLE_EQ(c.capacity, 350);
  c = BestCredit(table_, gpu_, g1_, "m", Paper(60, 2));
  ASSERT_NE(c.row, nullptr);
  EXPECT_EQ(c.row->procs, 2);
  EXPECT_DOUBLE_EQ(c.capacity, 380);
  c = BestCredit(table_, gpu_, g1_, "m", Paper(45, 2));
  ASSERT_NE(c.row, nullptr);
  EXPECT_EQ(c.row->batch, 8);
  EXPECT_EQ(BestCredit(table_, gpu_, g1_, "m", Paper(4, 4)).row, nullptr);
  EXPECT_EQ(BestCredit(table_, gpu_, g1_, "other", Paper(100, 1)).row, nullptr);
}

// Under an SLO of 100 ms, batch 16 (90 ms a batch) leaves no room to wait:
// the p99 model credits it with little and prefers batch 8 (40 ms).
TEST_F(CapacityModelTest, P99CreditsWhatKeepsTheQuantileWithinTheSlo) {
  ServiceTerms terms{{100, 1}, 100, {}, CapacityModel::kP99};
  Credit c = BestCredit(table_, gpu_, g1_, "m", terms);
  ASSERT_NE(c.row, nullptr);
  EXPECT_EQ(c.row->batch, 8);
  double expected =
      QuantileCapacity(BatchCurve::Of(table_, *c.row), {.max_batch = 8}, 100);
  EXPECT_DOUBLE_EQ(c.capacity, expected);
  EXPECT_DOUBLE_EQ(RowCapacity(table_, *c.row, terms), expected);
  EXPECT_GT(c.capacity, 150);
  EXPECT_LT(c.capacity, 300);
  EXPECT_LT(RowCapacity(table_, table_.rows[2], terms), c.capacity);
  // The budget rule still chooses the rows: within 0.45 x 100 ms only
  // batches 1 and 8 may serve.
  terms.limits.latency_limit_ms = 45;
  EXPECT_EQ(BestCredit(table_, gpu_, g1_, "m", terms).row->batch, 8);
  terms.limits.latency_limit_ms = 30;
  EXPECT_EQ(BestCredit(table_, gpu_, g1_, "m", terms).row->batch, 1);
}

}  // namespace
}  // namespace migserve::queueing
