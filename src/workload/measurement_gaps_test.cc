#include "workload/measurement_gaps.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::workload {
namespace {

constexpr const char* kGapProfiles =
    "model,gpu,profile,batch,throughput,latency_ms\n"
    "bert,A100-SXM4-80GB,1g.10gb,1,100,10\n"
    "bert,A100-SXM4-80GB,3g.40gb,1,300,10\n"
    "bert,A100-SXM4-80GB,7g.80gb,1,700,10\n"
    "resnet,A100-SXM4-80GB,1g.10gb,1,100,10\n"
    "resnet,A100-SXM4-80GB,1g.20gb,1,100,10\n"
    "resnet,A100-SXM4-80GB,2g.20gb,1,100,10\n"
    "resnet,A100-SXM4-80GB,3g.40gb,1,100,10\n"
    "resnet,A100-SXM4-80GB,4g.40gb,1,100,10\n"
    "resnet,A100-SXM4-80GB,7g.80gb,1,100,10\n"
    "vit,H100-SXM5-80GB,1g.10gb,1,100,10\n";

std::vector<MeasurementGap> Gaps(const std::string& options) {
  Workload w = ParseWorkload("gpu: A100-SXM4-80GB\n" + options +
                                 "services:\n"
                                 "  - {name: b1, model: bert, throughput: 1, "
                                 "latency_ms: 50}\n"
                                 "  - {name: r, model: resnet, throughput: 1, "
                                 "latency_ms: 50}\n"
                                 "  - {name: b2, model: bert, throughput: 1, "
                                 "latency_ms: 50}\n"
                                 "  - {name: v, model: vit, throughput: 1, "
                                 "latency_ms: 50}\n",
                             "w.yaml")
                   .value();
  return FindMeasurementGaps(
      w, profile::ParseProfileCsv(kGapProfiles, "p.csv").value(),
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value());
}

TEST(MeasurementGapsTest, NamesEachModelsUnmeasuredEnabledProfilesOnce) {
  std::vector<MeasurementGap> gaps = Gaps("");
  // resnet misses only 1g.20gb and +me, which are off by default; vit has
  // no rows for the GPU at all (an error elsewhere, not a gap).
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].model, "bert");
  EXPECT_EQ(gaps[0].profiles, (std::vector<std::string>{"2g.20gb", "4g.40gb"}));
}

TEST(MeasurementGapsTest, OptionalProfilesCountWhenEnabled) {
  std::vector<MeasurementGap> gaps = Gaps("optional_profiles: true\n");
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].profiles, (std::vector<std::string>{"1g.10gb+me", "1g.20gb",
                                                        "2g.20gb", "4g.40gb"}));
  EXPECT_EQ(gaps[1].model, "resnet");
  EXPECT_EQ(gaps[1].profiles, std::vector<std::string>{"1g.10gb+me"});
}

}  // namespace
}  // namespace migserve::workload
