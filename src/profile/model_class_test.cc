#include "profile/model_class.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"

namespace migserve::profile {
namespace {

TEST(ModelClassTest, RatioOfWholeToSmallestPerSlice) {
  auto table = ParseProfileCsv(
      "model,gpu,profile,batch,throughput,latency_ms\n"
      "sub,A100-SXM4-80GB,1g.10gb,1,100,1\n"
      "sub,A100-SXM4-80GB,7g.80gb,1,400,1\n"
      "lin,A100-SXM4-80GB,1g.10gb,1,100,1\n"
      "lin,A100-SXM4-80GB,7g.80gb,1,700,1\n"
      "sup,A100-SXM4-80GB,2g.20gb,1,100,1\n"
      "sup,A100-SXM4-80GB,7g.80gb,1,400,1\n"
      "only,A100-SXM4-80GB,7g.80gb,1,400,1\n",
      "p.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  const mig::GpuModel& gpu =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  std::vector<ModelClass> classes = ClassifyModels(*table, gpu);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].model, "lin");
  EXPECT_EQ(classes[0].scaling, Scaling::kLinear);
  EXPECT_DOUBLE_EQ(classes[0].ratio, 7);
  EXPECT_EQ(classes[1].model, "sub");
  EXPECT_EQ(classes[1].scaling, Scaling::kSubLinear);
  EXPECT_EQ(classes[2].model, "sup");
  EXPECT_EQ(classes[2].smallest_profile, "2g.20gb");
  EXPECT_DOUBLE_EQ(classes[2].ratio, 8);
  EXPECT_EQ(classes[2].scaling, Scaling::kSuperLinear);
}

}  // namespace
}  // namespace migserve::profile
