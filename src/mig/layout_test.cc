#include "mig/layout.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::mig {
namespace {

using testing::Gpu;

Layout Parse(const GpuModel& model,
             std::vector<std::pair<const char*, int>> items) {
  std::vector<Instance> instances;
  for (auto [name, start] : items) {
    int p = model.FindProfile(name);
    EXPECT_GE(p, 0) << name;
    instances.push_back({p, start});
  }
  return Layout(instances);
}

TEST(LayoutTest, FourWithThreeLegalOnlyWithoutLegacyFlag) {
  const GpuModel& a100 = Gpu("A100-SXM4-40GB");
  Layout layout = Parse(a100, {{"4g.20gb", 0}, {"3g.20gb", 4}});
  EXPECT_TRUE(IsLegal(a100, layout, MigOptions{}));
  std::string why;
  EXPECT_FALSE(IsLegal(a100, layout, MigOptions{.legacy_4g3g = true}, &why));
  EXPECT_NE(why.find("R510"), std::string::npos) << why;
  const GpuModel& h100 = Gpu("H100-SXM5-80GB");
  EXPECT_TRUE(IsLegal(h100, Parse(h100, {{"4g.40gb", 0}, {"3g.40gb", 4}}),
                      MigOptions{.legacy_4g3g = true}));
}

TEST(LayoutTest, RejectsThreeSliceNextToOneSliceInsideItsMemory) {
  const GpuModel& a100 = Gpu("A100-SXM4-80GB");
  std::string why;
  EXPECT_FALSE(IsLegal(a100, Parse(a100, {{"3g.40gb", 0}, {"1g.10gb", 3}}),
                       MigOptions{}, &why));
  EXPECT_EQ(why, "1g.10gb@3 overlaps 3g.40gb@0 at memory slice 3");
  EXPECT_TRUE(IsLegal(a100, Parse(a100, {{"3g.40gb", 0}, {"1g.10gb", 4}}),
                      MigOptions{}));
}

TEST(LayoutTest, OverlapsByMemorySlices) {
  const GpuModel& a100 = Gpu("A100-SXM4-40GB");
  Instance three_at_4{a100.FindProfile("3g.20gb"), 4};
  EXPECT_TRUE(Overlaps(a100, three_at_4, {a100.FindProfile("1g.5gb"), 6}));
  EXPECT_TRUE(Overlaps(a100, three_at_4, {a100.FindProfile("7g.40gb"), 0}));
  EXPECT_FALSE(Overlaps(a100, three_at_4, {a100.FindProfile("1g.5gb"), 3}));
  EXPECT_FALSE(Overlaps(a100, three_at_4, {a100.FindProfile("4g.20gb"), 0}));
}

TEST(LayoutTest, RejectsDisallowedStart) {
  const GpuModel& a100 = Gpu("A100-SXM4-80GB");
  std::string why;
  EXPECT_FALSE(
      IsLegal(a100, Parse(a100, {{"2g.20gb", 1}}), MigOptions{}, &why));
  EXPECT_EQ(why, "2g.20gb cannot start at 1 (allowed starts: 0, 2, 4)");
}

TEST(LayoutTest, RejectsTooManyComputeSlicesAndOptionalProfiles) {
  const GpuModel& a100 = Gpu("A100-SXM4-80GB");
  std::string why;
  Layout four_1g20 = Parse(a100, {{"1g.20gb", 0}, {"1g.20gb", 2}});
  EXPECT_FALSE(IsLegal(a100, four_1g20, MigOptions{}, &why));
  EXPECT_TRUE(IsLegal(a100, four_1g20, MigOptions{.optional_profiles = true}));
  Layout two_me = Parse(a100, {{"1g.10gb+me", 0}, {"1g.10gb+me", 1}});
  EXPECT_FALSE(
      IsLegal(a100, two_me, MigOptions{.optional_profiles = true}, &why));
  EXPECT_EQ(why, "at most 1 1g.10gb+me per GPU");
  const GpuModel& a30 = Gpu("A30-24GB");
  EXPECT_FALSE(IsLegal(a30, Parse(a30, {{"4g.24gb", 0}, {"1g.6gb", 3}}),
                       MigOptions{}, &why));
}

TEST(LayoutTest, CanonicalOrderAndString) {
  const GpuModel& a100 = Gpu("A100-SXM4-80GB");
  Layout a = Parse(a100, {{"1g.10gb", 6}, {"4g.40gb", 0}, {"2g.20gb", 4}});
  Layout b = Parse(a100, {{"4g.40gb", 0}, {"2g.20gb", 4}, {"1g.10gb", 6}});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.ToString(a100), "4g.40gb@0+2g.20gb@4+1g.10gb@6");
  EXPECT_EQ(a100.FindProfile("7g.79gb"), a100.FindProfile("7g.80gb"));
}

}  // namespace
}  // namespace migserve::mig
