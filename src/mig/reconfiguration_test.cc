#include "mig/reconfiguration.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"

namespace migserve::mig {
namespace {

class ReconfigurationTest : public ::testing::Test {
 protected:
  const GpuModel& a100_ = *GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  int g1_ = a100_.FindProfile("1g.10gb");
  int g2_ = a100_.FindProfile("2g.20gb");
  int g3_ = a100_.FindProfile("3g.40gb");
  int g4_ = a100_.FindProfile("4g.40gb");
  int g7_ = a100_.FindProfile("7g.80gb");
};

TEST_F(ReconfigurationTest, SplitsFreeHalfLeavingOtherHalf) {
  Layout before({{g3_, 0}, {g3_, 4}});
  Reconfiguration change{{{g3_, 4}}, {{g2_, 4}, {g1_, 6}}};
  Layout after;
  ASSERT_TRUE(
      IsLegalReconfiguration(a100_, MigOptions{}, before, change, &after));
  EXPECT_EQ(after, Layout({{g3_, 0}, {g2_, 4}, {g1_, 6}}));
}

TEST_F(ReconfigurationTest, RejectsChangeThatTouchesInstanceOutsideItsSet) {
  Layout before({{g3_, 0}, {g3_, 4}});
  std::string why;
  // 4g@0 needs the memory of 3g@0, which is not in the changed set.
  Reconfiguration change{{{g3_, 4}}, {{g4_, 0}}};
  EXPECT_FALSE(IsLegalReconfiguration(a100_, MigOptions{}, before, change,
                                      nullptr, &why));
  EXPECT_EQ(why,
            "layout after is illegal: 4g.40gb@0 overlaps 3g.40gb@0 at memory "
            "slice 0");
  // Removing an instance the GPU does not have is illegal too.
  Reconfiguration ghost{{{g7_, 0}}, {}};
  EXPECT_FALSE(IsLegalReconfiguration(a100_, MigOptions{}, before, ghost,
                                      nullptr, &why));
  EXPECT_EQ(why, "7g.80gb@0 is not on the GPU");
}

TEST_F(ReconfigurationTest, LegacyRuleAppliesToTheLayoutAfter) {
  Layout before({{g3_, 0}, {g3_, 4}});
  Reconfiguration change{{{g3_, 0}}, {{g4_, 0}}};
  EXPECT_TRUE(
      IsLegalReconfiguration(a100_, MigOptions{}, before, change, nullptr));
  EXPECT_FALSE(IsLegalReconfiguration(a100_, MigOptions{.legacy_4g3g = true},
                                      before, change, nullptr));
}

TEST_F(ReconfigurationTest, DiffIsMinimal) {
  Layout before({{g4_, 0}, {g2_, 4}, {g1_, 6}});
  Layout after({{g4_, 0}, {g1_, 4}, {g1_, 5}, {g1_, 6}});
  Reconfiguration d = Diff(before, after);
  EXPECT_EQ(d.remove, (std::vector<Instance>{{g2_, 4}}));
  EXPECT_EQ(d.add, (std::vector<Instance>{{g1_, 4}, {g1_, 5}}));
  EXPECT_TRUE(IsLegalReconfiguration(a100_, MigOptions{}, before, d, nullptr));
}

}  // namespace
}  // namespace migserve::mig
