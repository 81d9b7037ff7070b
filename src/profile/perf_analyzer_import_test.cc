#include "profile/perf_analyzer_import.h"

#include <gtest/gtest.h>

#include "util/test_util.h"

namespace migserve::profile {
namespace {

using testing::SourcePath;

// Concurrency 1, 2, 8, 4 sorted by throughput as perf_analyzer writes
// them; batch 8 on 1g.10gb, from the file name.
const std::string kSweep = SourcePath(
    "src/profile/testdata/resnet50__A100-SXM4-80GB__1g.10gb__b8.csv");
const std::string kRequestRate =
    SourcePath("src/profile/testdata/request_rate.csv");

StatusOr<ProfileRow> Import(const std::string& path,
                            const PerfAnalyzerOptions& options) {
  auto imported = ImportPerfAnalyzer({path}, options);
  if (!imported.ok()) return imported.status();
  EXPECT_EQ(imported->profiles.rows.size(), 1u);
  return imported->profiles.rows.at(0);
}

// A `-b 1` sweep against a server that batches: 1,600/s at concurrency 16
// cannot come from one process serving one request at a time in 4 ms
// (250/s); the import warns. A sweep that stays within that has no warning.
TEST(PerfAnalyzerImportTest, WarnsWhenTheServerMustHaveBatched) {
  std::string header =
      "Concurrency,Inferences/Second,p50 latency,p90 latency,p99 latency\n";
  std::string batched = testing::WriteTempFile(
      "m__A100-SXM4-80GB__2g.20gb__b1.csv",
      header + "1,250,4000,4100,4200\n16,1600,10000,10500,11000\n");
  auto imported = ImportPerfAnalyzer({batched}, {});
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  ASSERT_EQ(imported->warnings.size(), 1u);
  EXPECT_EQ(imported->warnings[0].rfind(
                batched + ": 1600/s at batch 1 is 6.4x what 1 process(es) "
                          "serve one batch of 1 at a time in 4 ms",
                0),
            0u)
      << imported->warnings[0];
  std::string plain = testing::WriteTempFile(
      "m__A100-SXM4-80GB__2g.20gb__b8.csv",
      header + "1,250,32000,33000,34000\n2,300,53000,54000,55000\n");
  imported = ImportPerfAnalyzer({plain}, {});
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_TRUE(imported->warnings.empty());
}

TEST(PerfAnalyzerImportTest, BestThroughputWithMicrosecondsAsMilliseconds) {
  auto row = Import(kSweep, {});
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->model, "resnet50");
  EXPECT_EQ(row->gpu, "A100-SXM4-80GB");
  EXPECT_EQ(row->profile, "1g.10gb");
  EXPECT_EQ(row->batch, 8);
  EXPECT_EQ(row->procs, 1);
  // Concurrency 4 (745.6/s) beats 8 (741.2/s), though 8 is the last row.
  EXPECT_DOUBLE_EQ(row->throughput, 745.6);
  EXPECT_DOUBLE_EQ(*row->latency_p50_ms, 42.905);
  EXPECT_DOUBLE_EQ(*row->latency_p90_ms, 45.010);
  EXPECT_DOUBLE_EQ(*row->latency_p99_ms, 49.870);
  // The batch time: p50 at concurrency 1, 20412 us.
  EXPECT_DOUBLE_EQ(row->latency_ms, 20.412);
}

TEST(PerfAnalyzerImportTest, LatencyLimitOrConcurrencyPicksThePoint) {
  PerfAnalyzerOptions limit;
  limit.latency_limit_ms = 45;  // concurrency 4's p99 is 49.87 ms
  auto row = Import(kSweep, limit);
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_DOUBLE_EQ(row->throughput, 602.4);
  EXPECT_DOUBLE_EQ(*row->latency_p99_ms, 31.876);
  EXPECT_DOUBLE_EQ(row->latency_ms, 20.412);

  PerfAnalyzerOptions at;
  at.concurrency = 8;
  row = Import(kSweep, at);
  ASSERT_TRUE(row.ok());
  EXPECT_DOUBLE_EQ(row->throughput, 741.2);
  EXPECT_DOUBLE_EQ(*row->latency_p50_ms, 84.12);
}

TEST(PerfAnalyzerImportTest, FlagsWinOverTheFileName) {
  PerfAnalyzerOptions options;
  options.model = "rn50";
  options.batch = 4;
  options.procs = 2;
  options.profile = "MIG 1g.10gb";
  auto row = Import(kSweep, options);
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->model, "rn50");
  EXPECT_EQ(row->batch, 4);
  EXPECT_EQ(row->procs, 2);
  EXPECT_EQ(row->profile, "1g.10gb");
}

TEST(PerfAnalyzerImportTest, RequestRateSweepsNeedFlagsWhenTheNameSaysNothing) {
  EXPECT_EQ(Import(kRequestRate, {}).status().message(),
            kRequestRate +
                ": --model not given, and the file name does not follow "
                "MODEL__GPU__PROFILE__bBATCH[__pPROCS].csv");
  PerfAnalyzerOptions options;
  options.model = "bert";
  options.gpu = "H100-SXM5-80GB";
  options.profile = "7g.80gb";
  options.batch = 1;
  auto row = Import(kRequestRate, options);
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_DOUBLE_EQ(row->throughput, 312.5);
  EXPECT_DOUBLE_EQ(row->latency_ms, 6.1);
  options.latency_limit_ms = 20;
  row = Import(kRequestRate, options);
  ASSERT_TRUE(row.ok());
  EXPECT_DOUBLE_EQ(row->throughput, 199.1);
}

TEST(PerfAnalyzerImportTest, ImpossibleChoicesSayWhatTheFileHas) {
  PerfAnalyzerOptions at;
  at.concurrency = 3;
  EXPECT_EQ(Import(kSweep, at).status().message(),
            kSweep + ": no row with Concurrency 3 (has: 1, 2, 8, 4)");
  PerfAnalyzerOptions limit;
  limit.latency_limit_ms = 10;
  EXPECT_EQ(Import(kSweep, limit).status().message(),
            kSweep +
                ": no row's p99 latency is within --latency-limit 10 ms (the "
                "lowest is 22.104 ms, at Concurrency 1)");
  PerfAnalyzerOptions profile;
  profile.profile = "5g.50gb";
  EXPECT_NE(Import(kSweep, profile)
                .status()
                .message()
                .find("unknown profile '5g.50gb' on A100-SXM4-80GB (known: "),
            std::string::npos);
  EXPECT_EQ(ImportPerfAnalyzer({kSweep, kSweep}, {}).status().message(),
            kSweep + ": measures the same point as " + kSweep +
                " (resnet50 A100-SXM4-80GB 1g.10gb batch 8 procs 1)");
}

TEST(PerfAnalyzerImportTest, OtherFilesAreNamed) {
  auto row = ImportPerfAnalyzerCsv("model,gpu\nx,y\n", "m__g__p__b1.csv", {});
  EXPECT_FALSE(row.ok());
  PerfAnalyzerOptions options;
  options.gpu = "A100-SXM4-80GB";
  row = ImportPerfAnalyzerCsv("model,gpu\nx,y\n", "m__x__1g.10gb__b1.csv",
                              options);
  EXPECT_EQ(row.status().message(),
            "m__x__1g.10gb__b1.csv:1: header: neither 'Concurrency' nor "
            "'Request Rate' (is this a perf_analyzer -f file?)");
}

}  // namespace
}  // namespace migserve::profile
