#include "dra/nvidia_devices.h"

#include <gtest/gtest.h>

#include "mig/testing/gpus.h"

namespace migserve::dra {
namespace {

using testing::H100;

TEST(NvidiaDevicesTest, NamesAreTheDriversCanonicalNames) {
  const mig::GpuModel& h100 = H100();
  EXPECT_EQ(MigDeviceName(h100, 0, {h100.FindProfile("1g.10gb+me"), 3}),
            "gpu-0-mig-1g10gb-me-20-3");
  EXPECT_EQ(MigDeviceName(h100, 2, {h100.FindProfile("3g.40gb"), 4}),
            "gpu-2-mig-3g40gb-9-4");
  EXPECT_EQ(MigDeviceName(h100, 7, {h100.FindProfile("7g.80gb"), 0}),
            "gpu-7-mig-7g80gb-0-0");
}

TEST(NvidiaDevicesTest, ASliceListsEveryPlacementSortedByName) {
  const mig::GpuModel& h100 = H100();
  std::vector<MigDevice> devices = DynamicMigDevices(h100, 1);
  // 1g.10gb x7, +me x7, 1g.20gb x4, 2g x3, 3g x2, 4g x1, 7g x1.
  ASSERT_EQ(devices.size(), 25u);
  std::vector<std::string> names;
  for (const MigDevice& d : devices) {
    EXPECT_EQ(d.minor, 1);
    EXPECT_EQ(d.name, MigDeviceName(h100, 1, d.instance));
    names.push_back(d.name);
  }
  EXPECT_EQ(names.front(), "gpu-1-mig-1g10gb-19-0");
  EXPECT_EQ(names[6], "gpu-1-mig-1g10gb-19-6");
  EXPECT_EQ(names[7], "gpu-1-mig-1g10gb-me-20-0");
  EXPECT_EQ(names[14], "gpu-1-mig-1g20gb-15-0");
  EXPECT_EQ(names[18], "gpu-1-mig-2g20gb-14-0");
  EXPECT_EQ(names[21], "gpu-1-mig-3g40gb-9-0");
  EXPECT_EQ(names.back(), "gpu-1-mig-7g80gb-0-0");
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

}  // namespace
}  // namespace migserve::dra
