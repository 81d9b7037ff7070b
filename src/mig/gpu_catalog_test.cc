#include "mig/gpu_catalog.h"

#include <gtest/gtest.h>

namespace migserve::mig {
namespace {

TEST(GpuCatalogTest, ShipsTheFiveModels) {
  const GpuCatalog& catalog = GpuCatalog::Default();
  for (const char* name : {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
                           "H200-141GB", "A30-24GB"}) {
    auto model = catalog.Find(name);
    ASSERT_TRUE(model.ok()) << name;
    EXPECT_GE((*model)->WholeProfile(), 0) << name;
  }
  const GpuModel& a30 = *catalog.Find("A30-24GB").value();
  EXPECT_EQ(a30.compute_slices, 4);
  EXPECT_EQ(a30.profiles[a30.WholeProfile()].name, "4g.24gb");
}

TEST(GpuCatalogTest, UnknownGpuListsKnownOnes) {
  auto model = GpuCatalog::Default().Find("T4");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), Status::Code::kNotFound);
  EXPECT_NE(model.status().message().find("unknown GPU 'T4'"),
            std::string::npos);
  EXPECT_NE(model.status().message().find("A100-SXM4-80GB"), std::string::npos);
}

TEST(GpuCatalogTest, MalformedTableNamesLineAndField) {
  auto model = ParseGpuModel(
      "name: X\ncompute_slices: 7\nmemory_slices: 8\nmemory_gb: 40\n"
      "profiles:\n  - {name: 1g, compute_slices: one, memory_slices: 1,\n"
      "     memory_gb: 5, starts: [0]}\n",
      "x.yaml");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(),
            "x.yaml:6: profiles[0].compute_slices: expected an integer, got "
            "'one'");
  auto bad_start = ParseGpuModel(
      "name: X\ncompute_slices: 7\nmemory_slices: 8\nmemory_gb: 40\n"
      "profiles:\n  - {name: 3g, compute_slices: 3, memory_slices: 4, "
      "memory_gb: 20, starts: [6]}\n",
      "x.yaml");
  ASSERT_FALSE(bad_start.ok());
  EXPECT_EQ(bad_start.status().message(),
            "x.yaml:6: profiles[0].starts: start 6 does not fit");
}

}  // namespace
}  // namespace migserve::mig
