#include "profile/capacity.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"

namespace migserve::profile {
namespace {

class CapacityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = ParseProfileCsv(
        "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n"
        "m,A100-SXM4-80GB,1g.10gb,1,1,100,5,\n"
        "m,A100-SXM4-80GB,1g.10gb,8,1,300,40,\n"
        "m,A100-SXM4-80GB,1g.10gb,16,1,350,90,\n"
        "m,A100-SXM4-80GB,1g.10gb,8,2,380,60,\n"
        "m,A100-SXM4-80GB,1g.10gb,32,1,500,30,12\n"
        "m,A100-SXM4-80GB,1g.10gb,64,1,0,0,\n",
        "p.csv");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    table_ = *t;
  }
  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  int g1_ = gpu_.FindProfile("1g.10gb");
  ProfileTable table_;
};

TEST_F(CapacityTest, BestLatencyIgnoresLatencyLimitOnly) {
  auto best = BestLatency(table_, gpu_, mig::MigOptions{}, "m", 1);
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(*best, 5);
  EXPECT_FALSE(BestLatency(table_, gpu_, mig::MigOptions{}, "x", 1));
}

}  // namespace
}  // namespace migserve::profile
