#include "agent/mig_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "agent/dlopen_nvml.h"
#include "agent/testing/fake_nvml.h"
#include "mig/testing/gpus.h"

namespace migserve::agent {
namespace {

using testing::A100;
using testing::A100Instance;

mig::Layout LayoutOf(std::vector<mig::Instance> instances) {
  return mig::Layout(std::move(instances));
}

class MigDriverTest : public ::testing::Test {
 protected:
  MigDriverTest() : nvml_({&A100(), &A100()}) {
    driver_ = MigDriver::Open(&nvml_, mig::GpuCatalog::Default()).value();
  }

  FakeNvml nvml_;
  std::unique_ptr<MigDriver> driver_;
};

TEST_F(MigDriverTest, FindsTheModelAndEveryDefaultProfile) {
  ASSERT_EQ(driver_->gpu_count(), 2);
  EXPECT_EQ(driver_->model(1).name, "A100-SXM4-80GB");
  EXPECT_TRUE(driver_->ReadLayout(0).value().empty());
}

TEST_F(MigDriverTest, CreatesAtExplicitPlacementsAndReadsThemBack) {
  ASSERT_TRUE(
      driver_
          ->Apply(0, {{},
                      {A100Instance("3g.40gb", 4), A100Instance("2g.20gb", 0),
                       A100Instance("1g.10gb", 2)}})
          .ok());
  mig::Layout want =
      LayoutOf({A100Instance("2g.20gb", 0), A100Instance("1g.10gb", 2),
                A100Instance("3g.40gb", 4)});
  EXPECT_EQ(nvml_.Layout(0), want);
  EXPECT_EQ(driver_->ReadLayout(0).value(), want);
  EXPECT_TRUE(driver_->ReadLayout(1).value().empty());
}

TEST_F(MigDriverTest, ChangesOnlyTheListedInstances) {
  ASSERT_TRUE(
      driver_
          ->Apply(
              0, {{}, {A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)}})
          .ok());
  int before = nvml_.changes();
  // The 3g at 0 serves (in use) while the one at 4 becomes 2g + 1g + 1g.
  nvml_.SetInUse(0, A100Instance("3g.40gb", 0), true);
  Status s = driver_->Apply(
      0, {{A100Instance("3g.40gb", 4)},
          {A100Instance("2g.20gb", 4), A100Instance("1g.10gb", 6),
           A100Instance("1g.10gb", 6)}});
  EXPECT_FALSE(s.ok());  // 1g at 6 twice: illegal, refused before any change
  EXPECT_EQ(nvml_.changes(), before);
  s = driver_->Apply(
      0, {{A100Instance("3g.40gb", 4)},
          {A100Instance("2g.20gb", 4), A100Instance("1g.10gb", 6)}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Destroy CI + GI, then create GI + CI twice: six calls, none on the 3g at 0.
  EXPECT_EQ(nvml_.changes(), before + 6);
  EXPECT_EQ(nvml_.Layout(0),
            LayoutOf({A100Instance("3g.40gb", 0), A100Instance("2g.20gb", 4),
                      A100Instance("1g.10gb", 6)}));
}

TEST_F(MigDriverTest, NeverForcesAnInstanceInUse) {
  ASSERT_TRUE(driver_->Apply(1, {{}, {A100Instance("7g.80gb", 0)}}).ok());
  nvml_.SetInUse(1, A100Instance("7g.80gb", 0), true);
  Status s = driver_->Apply(
      1, {{A100Instance("7g.80gb", 0)}, {A100Instance("3g.40gb", 0)}});
  ASSERT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("GPU 1 7g.80gb@0"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("in use"), std::string::npos);
  EXPECT_EQ(nvml_.Layout(1), LayoutOf({A100Instance("7g.80gb", 0)}));
  nvml_.SetInUse(1, A100Instance("7g.80gb", 0), false);
  EXPECT_TRUE(driver_
                  ->Apply(1, {{A100Instance("7g.80gb", 0)},
                              {A100Instance("3g.40gb", 0)}})
                  .ok());
  EXPECT_EQ(nvml_.Layout(1), LayoutOf({A100Instance("3g.40gb", 0)}));
}

// A request that removes an idle instance and one in use destroys neither:
// every instance is checked before the first is destroyed (the agent used
// to destroy the idle one, then fail on the other).
TEST_F(MigDriverTest, ChecksEveryInstanceBeforeDestroyingAny) {
  ASSERT_TRUE(
      driver_
          ->Apply(
              0, {{}, {A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)}})
          .ok());
  nvml_.SetInUse(0, A100Instance("3g.40gb", 4), true);
  int before = nvml_.changes();
  Status s = driver_->Apply(
      0, {{A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)},
          {A100Instance("7g.80gb", 0)}});
  ASSERT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("GPU 0 3g.40gb@4: in use by process 10"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("nothing was destroyed"), std::string::npos);
  EXPECT_EQ(nvml_.changes(), before);
  EXPECT_EQ(nvml_.Layout(0),
            LayoutOf({A100Instance("3g.40gb", 0), A100Instance("3g.40gb", 4)}));
}

TEST_F(MigDriverTest, RefusesAChangeTheLiveLayoutDoesNotAllow) {
  EXPECT_EQ(driver_->Apply(0, {{A100Instance("1g.10gb", 0)}, {}}).code(),
            Status::Code::kFailedPrecondition);  // nothing to remove
  EXPECT_EQ(driver_->Apply(0, {{}, {A100Instance("3g.40gb", 2)}}).code(),
            Status::Code::kFailedPrecondition);  // 3g cannot start at 2
  EXPECT_EQ(driver_->Apply(5, {{}, {}}).code(), Status::Code::kInvalidArgument);
}

TEST_F(MigDriverTest, AFailedCreateLeavesNoHalfMadeInstance) {
  nvml_.FailNext(NVML_ERROR_UNKNOWN);
  EXPECT_FALSE(driver_->Apply(0, {{}, {A100Instance("4g.40gb", 0)}}).ok());
  EXPECT_TRUE(nvml_.Layout(0).empty());
}

TEST(FakeNvmlTest, EnforcesPlacementRulesItself) {
  FakeNvml nvml({&A100()});
  ASSERT_EQ(nvml.Init(), NVML_SUCCESS);
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(nvml.DeviceGetHandleByIndex(0, &device), NVML_SUCCESS);
  unsigned int id = static_cast<unsigned int>(
      A100().profiles[A100().FindProfile("3g.40gb")].nvml_id);
  nvmlGpuInstance_t gi = nullptr;
  nvmlGpuInstancePlacement_t at0{0, 4}, at2{2, 4}, at0_wrong_size{0, 2};
  EXPECT_EQ(nvml.DeviceCreateGpuInstanceWithPlacement(device, id, &at2, &gi),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvml.DeviceCreateGpuInstanceWithPlacement(device, id,
                                                      &at0_wrong_size, &gi),
            NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nvml.DeviceCreateGpuInstanceWithPlacement(device, id, &at0, &gi),
            NVML_SUCCESS);
  EXPECT_EQ(nvml.DeviceCreateGpuInstanceWithPlacement(device, id, &at0, &gi),
            NVML_ERROR_INSUFFICIENT_RESOURCES);
}

TEST(DlopenNvmlTest, SaysWhichLibraryIsMissing) {
  auto nvml = OpenNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(nvml.status().message().find("/nonexistent/libnvidia-ml.so.1"),
            std::string::npos);
}

TEST(DlopenNvmlTest, IdentifiesGpusByPciDeviceIdAsRealHardwareReportsThem) {
  // An H100 SXM5 (0x2330), an A30 (0x20B7) and an H100 PCIe (0x2331), which
  // has a table of its own (its data sheet differs): NVML's names match no
  // table name, the ids do.
  setenv("MIGSERVE_FAKE_NVML_GPUS", "0x2330,0x20B7,0x2331", 1);
  auto nvml = OpenNvml(MIGSERVE_FAKE_NVML_LIBRARY);
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  auto driver = MigDriver::Open(nvml->get(), mig::GpuCatalog::Default());
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  ASSERT_EQ((*driver)->gpu_count(), 3);
  EXPECT_EQ((*driver)->product(0), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*driver)->pci_device_id(0), 0x2330);
  EXPECT_EQ((*driver)->model(0).name, "H100-SXM5-80GB");
  EXPECT_EQ((*driver)->product(1), "NVIDIA A30");
  EXPECT_EQ((*driver)->pci_device_id(1), 0x20B7);
  EXPECT_EQ((*driver)->model(1).name, "A30-24GB");
  EXPECT_EQ((*driver)->product(2), "NVIDIA H100 PCIe");
  EXPECT_EQ((*driver)->model(2).name, "H100-PCIE-80GB");
  // The A30's NVML profile ids differ from the H100's (14 is 1g.6gb there).
  const mig::GpuModel& a30 = (*driver)->model(1);
  mig::Instance one{a30.FindProfile("1g.6gb"), 3};
  ASSERT_TRUE((*driver)->Apply(1, {{}, {one}}).ok());
  EXPECT_EQ((*driver)->ReadLayout(1).value(), mig::Layout({one}));
}

TEST(MigDriverOpenTest, NamesTheProductOfAGpuNoTableLists) {
  mig::GpuModel t4 = A100();
  t4.name = "T4";
  FakeNvml nvml({FakeGpu(&t4, {0x1EB8, "Tesla T4"})});
  auto driver = MigDriver::Open(&nvml, mig::GpuCatalog::Default());
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().message(),
            "GPU 0 is \"Tesla T4\" (PCI device id 0x1eb8): no GPU table lists "
            "PCI device id 0x1eb8 (add one with --gpu-table FILE, or name the "
            "model with --gpu)");
  // --gpu names the model instead.
  FakeNvml again({FakeGpu(&t4, {0x1EB8, "Tesla T4"})});
  auto named = MigDriver::Open(&again, mig::GpuCatalog::Default(),
                               std::string("A100-SXM4-80GB"));
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ((*named)->model(0).name, "A100-SXM4-80GB");
}

TEST(DlopenNvmlTest, DrivesAFakeLibraryByNvmlSymbolNames) {
  setenv("MIGSERVE_FAKE_NVML_GPUS", "A100-SXM4-80GB,H100-SXM5-80GB", 1);
  auto nvml = OpenNvml(MIGSERVE_FAKE_NVML_LIBRARY);
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  auto driver = MigDriver::Open(nvml->get(), mig::GpuCatalog::Default());
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  ASSERT_EQ((*driver)->gpu_count(), 2);
  const mig::GpuModel& h100 = (*driver)->model(1);
  EXPECT_EQ(h100.name, "H100-SXM5-80GB");
  mig::Instance i{h100.FindProfile("3g.40gb"), 4};
  ASSERT_TRUE((*driver)->Apply(1, {{}, {i}}).ok());
  EXPECT_EQ((*driver)->ReadLayout(1).value(), mig::Layout({i}));
}

}  // namespace
}  // namespace migserve::agent
