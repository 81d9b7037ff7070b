#include "workload/parvagpu_import.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "boundary/input_file.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::workload {
namespace {

std::string MakeDir() {
  std::string dir = testing::TempDir() + "/parva";
  for (const char* sub : {"/prof_data", "/SLO"}) {
    std::filesystem::create_directories(dir + sub);
  }
  std::string header =
      "Mig instance,Batch size,Workload Number,Throughput,Latency\n";
  EXPECT_TRUE(WriteFileAtomic(dir + "/prof_data/alpha.csv",
                              header + "1,8,1,100.5,0.013\n"
                                       "1,8,3,52.42,0.045\n"
                                       "7,8,1,0,0\n"
                                       "1,8,1,999,0.001\n")
                  .ok());
  EXPECT_TRUE(
      WriteFileAtomic(dir + "/prof_data/beta.csv", header + "7,16,1,700,0.02")
          .ok());
  EXPECT_TRUE(
      WriteFileAtomic(dir + "/SLO/SLO_req_rate.csv", "19,N/A\n46,728\n").ok());
  EXPECT_TRUE(
      WriteFileAtomic(dir + "/SLO/SLO_latency.csv", "6434,N/A\n4294,126").ok());
  return dir;
}

TEST(ParvaGpuImportTest, ConvertsUnitsSkipsZerosKeepsFirstDuplicate) {
  auto result = ImportParvaGpu(MakeDir());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const auto& rows = result->profiles.rows;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].model, "alpha");
  EXPECT_EQ(rows[0].profile, "1g.10gb");
  EXPECT_DOUBLE_EQ(rows[0].throughput, 100.5);
  EXPECT_DOUBLE_EQ(rows[0].latency_ms, 13);
  EXPECT_EQ(rows[1].procs, 3);
  EXPECT_DOUBLE_EQ(rows[1].throughput, 157.26);  // per process x 3
  EXPECT_EQ(rows[2].model, "beta");
  EXPECT_EQ(rows[2].profile, "7g.80gb");
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_NE(result->warnings[0].find("alpha.csv:5: duplicate of line 2"),
            std::string::npos);
  ASSERT_EQ(result->scenarios.size(), 2u);
  EXPECT_EQ(result->scenarios[0].services.size(), 1u);
  ASSERT_EQ(result->scenarios[1].services.size(), 2u);
  EXPECT_EQ(result->scenarios[1].services[1].name, "beta");
  EXPECT_DOUBLE_EQ(result->scenarios[1].services[1].throughput.value(), 728);
  EXPECT_DOUBLE_EQ(result->scenarios[1].services[1].latency_ms, 126);
  EXPECT_DOUBLE_EQ(result->scenarios[1].latency_budget, 0.45);
}

TEST(ParvaGpuImportTest, MalformedRowNamesFileLineColumn) {
  std::string dir = MakeDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/prof_data/beta.csv",
                              "Mig instance,Batch size,Workload Number,"
                              "Throughput,Latency\n5,16,1,700,0.02\n")
                  .ok());
  auto result = ImportParvaGpu(dir);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            dir +
                "/prof_data/beta.csv:2: Mig instance: expected 1, 2, 3, 4 "
                "or 7, got '5'");
}

// A required rate is a rate: above 0 and at most 1e9 req/s.
TEST(ParvaGpuImportTest, ARateOutOfRangeNamesFileLineAndModel) {
  for (const char* rate : {"0", "-3", "2e9", "x"}) {
    std::string dir = MakeDir();
    ASSERT_TRUE(WriteFileAtomic(dir + "/SLO/SLO_req_rate.csv",
                                std::string("19,N/A\n46,") + rate + "\n")
                    .ok());
    auto result = ImportParvaGpu(dir);
    ASSERT_FALSE(result.ok()) << rate;
    EXPECT_EQ(result.status().message(),
              dir +
                  "/SLO/SLO_req_rate.csv:2: beta: expected a rate > 0 and "
                  "at most 1e+09 or N/A, got '" +
                  rate + "'");
  }
}

TEST(ParvaGpuImportTest, ShippedProfilesMatchTheImporter) {
  std::string shared = testing::SourcePath("../shared/data/public/parvagpu");
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "no " << shared;
  auto result = ImportParvaGpu(shared);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->profiles.rows.size(), 1747u);
  auto shipped = ReadFile(testing::SourcePath("data/profiles/a100-80gb.csv"));
  ASSERT_TRUE(shipped.ok());
  EXPECT_EQ(*shipped, profile::FormatProfileCsv(result->profiles));
}

}  // namespace
}  // namespace migserve::workload
