#include "profile/model_analyzer_import.h"

#include <gtest/gtest.h>

#include "util/test_util.h"

namespace migserve::profile {
namespace {

const std::string kFile =
    testing::SourcePath("src/profile/testdata/metrics-model-inference.csv");

ModelAnalyzerOptions On1g() {
  ModelAnalyzerOptions options;
  options.gpu = "A100-SXM4-80GB";
  options.profile = "1g.10gb";
  return options;
}

struct Expected {
  std::string model;
  int batch, procs;
  double throughput, latency_ms, p99_ms;
};

void ExpectRows(const ProfileTable& table, const std::vector<Expected>& rows) {
  ASSERT_EQ(table.rows.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProfileRow& r = table.rows[i];
    SCOPED_TRACE(rows[i].model + " batch " + std::to_string(rows[i].batch));
    EXPECT_EQ(r.model, rows[i].model);
    EXPECT_EQ(r.gpu, "A100-SXM4-80GB");
    EXPECT_EQ(r.profile, "1g.10gb");
    EXPECT_EQ(r.batch, rows[i].batch);
    EXPECT_EQ(r.procs, rows[i].procs);
    EXPECT_DOUBLE_EQ(r.throughput, rows[i].throughput);
    EXPECT_DOUBLE_EQ(r.latency_ms, rows[i].latency_ms);
    EXPECT_DOUBLE_EQ(*r.latency_p99_ms, rows[i].p99_ms);
    EXPECT_FALSE(r.latency_p50_ms.has_value());
  }
}

// The file's Max Batch Size is larger than its client batches: the server
// batched dynamically, and each concurrency measured the batch its requests
// in flight per instance made (resnet50_config_default, one instance: 1,
// 2, 4 and 8; resnet50_config_0, two: 1, 2 and 4). Client batch 8 at max
// batch size 8 is batch 8 throughout.
TEST(ModelAnalyzerImportTest, BestPointPerModelServerBatchAndInstanceCount) {
  auto imported = ImportModelAnalyzer(kFile, On1g());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_TRUE(imported->warnings.empty());
  // latency_ms by Little's law at the group's lowest concurrency: busy
  // instances x batch x 1000 / rate.
  ExpectRows(imported->profiles,
             {
                 {"bert", 1, 1, 95.2, 10.504, 11.0},       // 1000/95.2
                 {"resnet50", 1, 1, 210.4, 4.753, 5.6},    // 1000/210.4
                 {"resnet50", 1, 2, 205.1, 4.876, 5.8},    // 1000/205.1
                 {"resnet50", 2, 1, 380.2, 5.26, 6.1},     // 2000/380.2
                 {"resnet50", 2, 2, 560.9, 7.131, 8.8},    // 2x2000/560.9
                 {"resnet50", 4, 1, 501.7, 7.973, 9.4},    // 4000/501.7
                 {"resnet50", 4, 2, 612.0, 13.072, 15.2},  // 2x4000/612
                 {"resnet50", 8, 1, 1520.5, 8.333, 24.3},  // 8000/960
             });
}

TEST(ModelAnalyzerImportTest, LatencyLimitAndModelFilter) {
  ModelAnalyzerOptions options = On1g();
  options.latency_limit_ms = 10;  // bert's only point has p99 11 ms
  auto imported = ImportModelAnalyzer(kFile, options);
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  ExpectRows(imported->profiles, {
                                     {"resnet50", 1, 1, 210.4, 4.753, 5.6},
                                     {"resnet50", 1, 2, 205.1, 4.876, 5.8},
                                     {"resnet50", 2, 1, 380.2, 5.26, 6.1},
                                     {"resnet50", 2, 2, 560.9, 7.131, 8.8},
                                     {"resnet50", 4, 1, 501.7, 7.973, 9.4},
                                     {"resnet50", 8, 1, 960.0, 8.333, 9.1},
                                 });
  options.model = "bert";
  EXPECT_EQ(ImportModelAnalyzer(kFile, options).status().message(),
            kFile +
                ": no measured point has a p99 latency within "
                "--latency-limit 10 ms");
  options.model = "vgg16";
  EXPECT_EQ(ImportModelAnalyzer(kFile, options).status().message(),
            kFile + ": no rows of model 'vgg16' (has: bert, resnet50)");
}

// Without Max Batch Size a client batch of 1 is taken at its word, and the
// import says what that costs if the server batched.
TEST(ModelAnalyzerImportTest, ClientBatchOneWithoutMaxBatchSizeWarns) {
  auto imported = ImportModelAnalyzerCsv(
      "Model,Batch,Concurrency,Instance Group,Throughput (infer/sec),p99 "
      "Latency (ms)\n"
      "m,1,1,1:GPU,200,5.5\n"
      "m,1,8,1:GPU,1600,9\n",
      "ma.csv", On1g());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  ASSERT_EQ(imported->profiles.rows.size(), 1u);
  EXPECT_EQ(imported->profiles.rows[0].batch, 1);
  ASSERT_EQ(imported->warnings.size(), 1u);
  EXPECT_NE(imported->warnings[0].find("ma.csv: rows of client batch 1 "
                                       "without a Max Batch Size column"),
            std::string::npos);
}

TEST(ModelAnalyzerImportTest, AvgLatencyIsTheBatchTimeWhenPresent) {
  auto imported = ImportModelAnalyzerCsv(
      "Model,Batch,Concurrency,Instance Group,Throughput (infer/sec),p90 "
      "Latency (ms),p99 Latency (ms),Avg Latency (ms)\n"
      "m,4,2,1:GPU,800,11,12,9.5\n"
      "m,4,1,1:GPU,500,8.5,9,7.25\n",
      "ma.csv", On1g());
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  const ProfileTable* table = &imported->profiles;
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(table->rows[0].throughput, 800);
  EXPECT_DOUBLE_EQ(table->rows[0].latency_ms, 7.25);
  EXPECT_DOUBLE_EQ(*table->rows[0].latency_p90_ms, 11);
}

TEST(ModelAnalyzerImportTest, BadFieldsAreNamed) {
  const std::string header =
      "Model,Batch,Concurrency,Instance Group,Throughput (infer/sec),p99 "
      "Latency (ms)\n";
  EXPECT_EQ(ImportModelAnalyzerCsv(header + "m,1,1,two,5,5\n", "ma.csv", On1g())
                .status()
                .message(),
            "ma.csv:2: Instance Group: expected COUNT:KIND as in '2:GPU', got "
            "'two'");
  EXPECT_EQ(ImportModelAnalyzerCsv("Model,Batch\nm,1\n", "ma.csv", On1g())
                .status()
                .message(),
            "ma.csv:1: header: missing column 'Concurrency' (has: Model, "
            "Batch)");
  EXPECT_EQ(
      ImportModelAnalyzerCsv(header + "m,1,1,1:GPU,x,5\n", "ma.csv", On1g())
          .status()
          .message(),
      "ma.csv:2: Throughput (infer/sec): not a finite number: 'x'");
}

}  // namespace
}  // namespace migserve::profile
