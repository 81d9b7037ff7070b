#include "profile/capacity.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"

namespace migserve::profile {
namespace {

TEST(CapacityTest, RowsFitByLatencyProcsAndMemory) {
  ProfileTable t = ParseProfileCsv(
                       "model,gpu,profile,batch,procs,throughput,latency_ms,"
                       "memory_gb\n"
                       "m,A100-SXM4-80GB,1g.10gb,1,1,100,5,\n"
                       "m,A100-SXM4-80GB,1g.10gb,8,2,380,3,\n"
                       "m,A100-SXM4-80GB,1g.10gb,32,1,500,2,12\n",
                       "p.csv")
                       .value();
  const mig::GpuModel& gpu =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Profile& g1 = gpu.profiles[gpu.FindProfile("1g.10gb")];
  EXPECT_TRUE(RowFits(t.rows[0], g1, {5, 1}));
  EXPECT_FALSE(RowFits(t.rows[0], g1, {4.9, 1}));
  EXPECT_FALSE(RowFits(t.rows[1], g1, {10, 1}));  // 2 processes
  EXPECT_TRUE(RowFits(t.rows[1], g1, {10, 2}));
  EXPECT_FALSE(RowFits(t.rows[2], g1, {10, 1}));  // 12 GB on a 1g.10gb
  EXPECT_EQ(FindRow(t, "m", "A100-SXM4-80GB", "1g.10gb", 8, 2), &t.rows[1]);
  EXPECT_EQ(FindRow(t, "m", "A100-SXM4-80GB", "1g.10gb", 8, 1), nullptr);
  // The lowest latency among rows that fit all but the latency limit: the
  // 12 GB row does not count; with 2 processes the 3 ms row does.
  EXPECT_DOUBLE_EQ(*BestLatency(t, gpu, mig::MigOptions{}, "m", 1), 5);
  EXPECT_DOUBLE_EQ(*BestLatency(t, gpu, mig::MigOptions{}, "m", 2), 3);
  EXPECT_FALSE(BestLatency(t, gpu, mig::MigOptions{}, "x", 1));
}

}  // namespace
}  // namespace migserve::profile
