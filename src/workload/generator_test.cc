#include "workload/generator.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/capacity_matrix.h"
#include "workload/relaxed_bound.h"

namespace migserve::workload {
namespace {

profile::ProfileTable Table() {
  return profile::ParseProfileCsv(
             "model,gpu,profile,batch,throughput,latency_ms\n"
             "a,A100-SXM4-80GB,1g.10gb,4,100,20\n"
             "a,A100-SXM4-80GB,7g.80gb,4,800,5\n"
             "b,A100-SXM4-80GB,1g.10gb,4,50,60\n"
             "b,A100-SXM4-80GB,3g.40gb,4,200,30\n",
             "p.csv")
      .value();
}

TEST(GeneratorTest, HitsTargetBoundAndIsDeterministic) {
  profile::ProfileTable table = Table();
  const mig::GpuModel& gpu =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  for (auto dist : {RateDistribution::kNormal, RateDistribution::kLognormal}) {
    GenerateOptions options;
    options.services = 7;
    options.distribution = dist;
    options.target_gpus = 40;
    options.seed = 3;
    auto w = GenerateWorkload(table, options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_EQ(w->services.size(), 7u);
    EXPECT_EQ(w->services[0].name, "a-1");
    EXPECT_EQ(w->services[1].name, "b-1");
    EXPECT_EQ(w->services[2].name, "a-2");
    auto caps = CapacityMatrix::Build(*w, table, gpu);
    ASSERT_TRUE(caps.ok());
    EXPECT_EQ(CeilGpus(RelaxedBound(*caps, gpu)), 40);
    auto again = GenerateWorkload(table, options);
    for (size_t i = 0; i < w->services.size(); ++i) {
      EXPECT_EQ(w->services[i].throughput.value(),
                again->services[i].throughput.value());
    }
  }
}

TEST(GeneratorTest, LatencyNoModelCanMeetIsAnError) {
  GenerateOptions options;
  options.latencies_ms = {1};
  auto w = GenerateWorkload(Table(), options);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("fits no profile"), std::string::npos);
}

TEST(GeneratorTest, ValidatesOptions) {
  GenerateOptions options;
  options.services = 0;
  EXPECT_EQ(GenerateWorkload(Table(), options).status().message(),
            "--services must be >= 1");
}

}  // namespace
}  // namespace migserve::workload
