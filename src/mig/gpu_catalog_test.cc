#include "mig/gpu_catalog.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "mig/layout_enumerator.h"
#include "util/registry_freeze.h"

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

TEST(GpuCatalogTest, ShipsEveryMigGeometry) {
  // One table per distinct geometry; each 8-slice table has the A100/H100
  // placements, so 19 maximal placed layouts (no pre-R510 rule).
  const GpuCatalog& catalog = GpuCatalog::Default();
  for (const char* name : {"H100-NVL-94GB", "GH200-96GB", "GH200-144GB",
                           "B200-180GB", "H200-141GB", "H100-SXM5-80GB"}) {
    auto model = catalog.Find(name);
    ASSERT_TRUE(model.ok()) << name;
    EXPECT_EQ(MaximalLayouts(**model, {}).size(), 19u) << name;
  }
  EXPECT_EQ(MaximalLayouts(*catalog.Find("A30-24GB").value(), {}).size(), 5u);
  EXPECT_EQ(catalog.Find("B200-180GB").value()->profiles[4].name, "3g.90gb");
}

TEST(GpuCatalogTest, FindsEveryProductByItsPciDeviceId) {
  const GpuCatalog& catalog = GpuCatalog::Default();
  struct Case {
    unsigned int id;
    const char* model;
  };
  for (const Case& c : std::vector<Case>{{0x20B0, "A100-SXM4-40GB"},
                                         {0x20F1, "A100-PCIE-40GB"},
                                         {0x20B2, "A100-SXM4-80GB"},
                                         {0x20B5, "A100-PCIE-80GB"},
                                         {0x2330, "H100-SXM5-80GB"},
                                         {0x233010DE, "H100-SXM5-80GB"},
                                         {0x2331, "H100-PCIE-80GB"},
                                         {0x2321, "H100-NVL-94GB"},
                                         {0x2342, "GH200-96GB"},
                                         {0x2348, "GH200-144GB"},
                                         {0x2335, "H200-141GB"},
                                         {0x233B, "H200-NVL-141GB"},
                                         {0x2901, "B200-180GB"},
                                         {0x20B7, "A30-24GB"}}) {
    auto model = catalog.FindByPciDeviceId(c.id);
    ASSERT_TRUE(model.ok()) << std::hex << c.id;
    EXPECT_EQ((*model)->name, c.model) << std::hex << c.id;
  }
  // Another vendor's id in the lower half is not NVIDIA's 0x2330.
  EXPECT_FALSE(catalog.FindByPciDeviceId(0x23301002).ok());
  EXPECT_EQ(catalog.FindByPciDeviceId(0x1EB8).status().code(),
            Status::Code::kNotFound);
  // No PCI id is claimed by two shipped tables.
  std::set<int> seen;
  for (const GpuModel* m : catalog.models()) {
    for (int id : m->pci_device_ids) {
      EXPECT_TRUE(seen.insert(id).second) << m->name << " " << id;
    }
  }
}

// A PCIe or NVL part shares its SXM part's geometry, not its data sheet
// (issue 74: an H100 PCIe read as an SXM5 had 68% more bandwidth): each is
// a table of its own with its own figures and SMs.
TEST(GpuCatalogTest, PcieAndNvlPartsAreTablesOfTheirOwn) {
  const GpuCatalog& catalog = GpuCatalog::Default();
  const GpuModel& sxm = *catalog.Find("H100-SXM5-80GB").value();
  const GpuModel& pcie = *catalog.Find("H100-PCIE-80GB").value();
  EXPECT_EQ(pcie.name, "H100-PCIE-80GB");
  EXPECT_EQ(pcie.memory_bandwidth_gbs, 2000);
  EXPECT_EQ(pcie.dense_bf16_tflops, 756);
  EXPECT_EQ(pcie.sms, 114);
  EXPECT_EQ(sxm.memory_bandwidth_gbs, 3350);
  ASSERT_EQ(pcie.profiles.size(), sxm.profiles.size());
  for (size_t p = 0; p < sxm.profiles.size(); ++p) {
    EXPECT_EQ(pcie.profiles[p].name, sxm.profiles[p].name);
    EXPECT_EQ(pcie.profiles[p].starts, sxm.profiles[p].starts);
    EXPECT_LE(pcie.profiles[p].sms, sxm.profiles[p].sms);
  }
  EXPECT_EQ(catalog.Find("A100-PCIE-80GB").value()->memory_bandwidth_gbs, 1935);
  EXPECT_EQ(catalog.Find("H200-NVL-141GB").value()->dense_bf16_tflops, 835);
  EXPECT_EQ(catalog.Find("NVIDIA H100 PCIe").value()->name, "H100-PCIE-80GB");
}

TEST(GpuCatalogTest, UserTablesJoinTheCatalogAndWinOnPciIds) {
  const std::string yaml =
      "name: TEST-H100-CUSTOM\nproducts:\n"
      "  - {pci_device_id: 0x2330, name: \"NVIDIA H100 80GB HBM3\"}\n"
      "compute_slices: 7\nmemory_slices: 8\nmemory_gb: 80\nprofiles:\n"
      "  - {name: 7g.80gb, compute_slices: 7, memory_slices: 8, "
      "memory_gb: 79, starts: [0]}\n";
  auto model = ParseGpuModel(yaml, "mine.yaml");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->pci_device_ids, std::vector<int>{0x2330});
  ASSERT_TRUE(GpuCatalog::AddToDefault(*model).ok());
  ASSERT_TRUE(GpuCatalog::AddToDefault(*model).ok());  // the same: no-op
  EXPECT_EQ(GpuCatalog::Default().FindByPciDeviceId(0x2330).value()->name,
            "TEST-H100-CUSTOM");
  GpuModel clash = *model;
  clash.name = "A100-80GB";  // an alias of a shipped table
  Status added = GpuCatalog::AddToDefault(clash);
  EXPECT_EQ(added.message(),
            "GPU table A100-80GB: A100-80GB already names A100-SXM4-80GB, "
            "whose table differs (a table may repeat a known GPU's name only "
            "with the same geometry)");
}

TEST(GpuCatalogTest, NoTableJoinsWhileAFreezeLives) {
  GpuModel model = *GpuCatalog::Default().Find("A30-24GB").value();
  model.name = "TEST-FROZEN";
  model.aliases.clear();
  model.pci_device_ids.clear();
  {
    FreezeRegistries outer;
    { FreezeRegistries inner; }
    Status added = GpuCatalog::AddToDefault(model);  // `outer` still lives
    EXPECT_EQ(added.code(), Status::Code::kFailedPrecondition);
    EXPECT_EQ(added.message(),
              "GPU table TEST-FROZEN: the GPU catalog is fixed while a command "
              "runs (give the table with --gpu-table)");
  }
  EXPECT_FALSE(GpuCatalog::Default().Find("TEST-FROZEN").ok());
  EXPECT_TRUE(GpuCatalog::AddToDefault(model).ok());
  EXPECT_TRUE(GpuCatalog::Default().Find("TEST-FROZEN").ok());
}

TEST(GpuCatalogTest, ProfilesAreFoundByShapeAsDriversPrintThem) {
  const GpuModel& h100 = *GpuCatalog::Default().Find("H100-SXM5-80GB").value();
  auto name = [&](std::string_view n) {
    int p = h100.FindProfile(n);
    return p < 0 ? std::string("-") : h100.profiles[p].name;
  };
  EXPECT_EQ(name("7g.80gb"), "7g.80gb");
  EXPECT_EQ(name("MIG 7g.79gb"), "7g.80gb");
  EXPECT_EQ(name("1g.11gb"), "1g.10gb");
  EXPECT_EQ(name("1g.19gb"), "1g.20gb");
  EXPECT_EQ(name("1g.10gb+me"), "1g.10gb+me");
  EXPECT_EQ(name("1g.11gb+me"), "1g.10gb+me");
  EXPECT_EQ(name("2g.30gb"), "-");     // 50% off
  EXPECT_EQ(name("5g.40gb"), "-");     // no 5g
  EXPECT_EQ(name("1c.3g.40gb"), "-");  // a compute-instance profile
  EXPECT_EQ(name("3g"), "-");
  // Found by fuzz/profile_csv_fuzz.cc: too many digits for a double.
  EXPECT_EQ(name("1g." + std::string(400, '9') + "gb"), "-");
}

// The short names docs use and the names NVML and nvidia-smi print find
// their model (issue 36: both were refused).
TEST(GpuCatalogTest, FindsAliasesAndNvmlNames) {
  const GpuCatalog& c = GpuCatalog::Default();
  EXPECT_EQ(c.Find("A100-80GB").value()->name, "A100-SXM4-80GB");
  EXPECT_EQ(c.Find("A100-40GB").value()->name, "A100-SXM4-40GB");
  EXPECT_EQ(c.Find("H100-80GB").value()->name, "H100-SXM5-80GB");
  EXPECT_EQ(c.Find("NVIDIA H100 80GB HBM3").value()->name, "H100-SXM5-80GB");
  EXPECT_EQ(c.Find("NVIDIA A100 80GB PCIe").value()->name, "A100-PCIE-80GB");
  EXPECT_FALSE(c.Find("NVIDIA H100").ok());
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

TEST(GpuCatalogTest, MoreProfilesThanTheOptimizerKeepsIsAnError) {
  std::string yaml =
      "name: X\ncompute_slices: 7\nmemory_slices: 8\nmemory_gb: 80\n"
      "profiles:\n";
  for (int k = 0; k <= kMaxProfiles; ++k) {
    yaml += fmt::format(
        "  - {{name: p{}, compute_slices: 1, memory_slices: 1, memory_gb: 10, "
        "starts: [0]}}\n",
        k);
  }
  auto model = ParseGpuModel(yaml, "x.yaml");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().message(),
            "x.yaml:6: profiles: 9 profiles; at most 8 are supported");
}

}  // namespace
}  // namespace migserve::mig
