#include "mig/layout_enumerator.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::mig {
namespace {

using testing::Gpu;

struct Counts {
  const char* gpu;
  bool legacy;
  size_t maximal;
  size_t multisets;
};

void PrintTo(const Counts& c, std::ostream* out) {
  *out << c.gpu << (c.legacy ? " legacy" : "") << ": " << c.maximal
       << " maximal, " << c.multisets << " multisets";
}

std::string CountsName(const ::testing::TestParamInfo<Counts>& info) {
  std::string name = info.param.gpu;
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name + (info.param.legacy ? "_legacy" : "");
}

class MaximalLayoutsTest : public ::testing::TestWithParam<Counts> {};

TEST_P(MaximalLayoutsTest, ExactCounts) {
  const Counts& c = GetParam();
  const GpuModel& model = Gpu(c.gpu);
  MigOptions options{.legacy_4g3g = c.legacy};
  std::vector<Layout> maximal = MaximalLayouts(model, options);
  EXPECT_EQ(maximal.size(), c.maximal);
  EXPECT_EQ(DistinctMultisets(model, maximal, nullptr).size(), c.multisets);
  for (const Layout& l : maximal) EXPECT_TRUE(IsLegal(model, l, options));
}

INSTANTIATE_TEST_SUITE_P(
    Gpus, MaximalLayoutsTest,
    ::testing::Values(Counts{"A100-SXM4-40GB", false, 19, 14},
                      Counts{"A100-SXM4-40GB", true, 18, 13},
                      Counts{"A100-SXM4-80GB", false, 19, 14},
                      Counts{"A100-SXM4-80GB", true, 18, 13},
                      Counts{"H100-SXM5-80GB", false, 19, 14},
                      Counts{"H100-SXM5-80GB", true, 19, 14},
                      Counts{"H200-141GB", false, 19, 14},
                      Counts{"A30-24GB", false, 5, 4}),
    CountsName);

TEST(LayoutEnumeratorTest, A100LegalLayoutCount) {
  // 297 legal non-empty placed layouts of the five classic profiles
  // (docs/mig-geometry-sources.md 1.9), 16 of them using all 7 slices.
  const GpuModel& a100 = Gpu("A100-SXM4-40GB");
  std::vector<Layout> legal = LegalLayouts(a100, MigOptions{});
  EXPECT_EQ(legal.size(), 297u);
  int full = 0;
  for (const Layout& l : legal) {
    int compute = 0;
    for (const Instance& i : l.instances()) {
      compute += a100.profiles[i.profile].compute_slices;
    }
    full += compute == 7;
  }
  EXPECT_EQ(full, 16);
}

TEST(LayoutEnumeratorTest, A100WithDoubleMemoryOneSlice) {
  // With 1g.10gb (two memory slices, R525+) on: 78 maximal placed layouts,
  // 38 multisets (docs/mig-geometry-sources.md 1.9).
  GpuModel a100 = Gpu("A100-SXM4-40GB");
  a100.profiles[a100.FindProfile("1g.10gb")].enabled_by_default = true;
  std::vector<Layout> maximal = MaximalLayouts(a100, MigOptions{});
  EXPECT_EQ(maximal.size(), 78u);
  EXPECT_EQ(DistinctMultisets(a100, maximal, nullptr).size(), 38u);
}

TEST(LayoutEnumeratorTest, MaximalIncludesSixSliceLayouts) {
  const GpuModel& a100 = Gpu("A100-SXM4-80GB");
  std::vector<Layout> maximal = MaximalLayouts(a100, MigOptions{});
  int three = a100.FindProfile("3g.40gb");
  Layout two_threes({{three, 0}, {three, 4}});
  EXPECT_NE(std::find(maximal.begin(), maximal.end(), two_threes),
            maximal.end());
}

}  // namespace
}  // namespace migserve::mig
