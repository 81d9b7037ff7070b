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

TEST(ModelAnalyzerImportTest, BestPointPerModelBatchAndInstanceCount) {
  auto table = ImportModelAnalyzer(kFile, On1g());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  // latency_ms by Little's law at concurrency 1: 1 x batch x 1000 / rate.
  ExpectRows(*table, {
                         {"bert", 1, 1, 95.2, 10.504, 11.0},       // 1000/95.2
                         {"resnet50", 1, 1, 520.3, 4.753, 17.9},   // 1000/210.4
                         {"resnet50", 1, 2, 612.0, 4.876, 15.2},   // 1000/205.1
                         {"resnet50", 8, 1, 1520.5, 8.333, 24.3},  // 8000/960
                     });
}

TEST(ModelAnalyzerImportTest, LatencyLimitAndModelFilter) {
  ModelAnalyzerOptions options = On1g();
  options.latency_limit_ms = 10;  // bert's only point has p99 11 ms
  auto table = ImportModelAnalyzer(kFile, options);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ExpectRows(*table, {
                         {"resnet50", 1, 1, 501.7, 4.753, 9.4},
                         {"resnet50", 1, 2, 560.9, 4.876, 8.8},
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

TEST(ModelAnalyzerImportTest, AvgLatencyIsTheBatchTimeWhenPresent) {
  auto table = ImportModelAnalyzerCsv(
      "Model,Batch,Concurrency,Instance Group,Throughput (infer/sec),p90 "
      "Latency (ms),p99 Latency (ms),Avg Latency (ms)\n"
      "m,4,2,1:GPU,800,11,12,9.5\n"
      "m,4,1,1:GPU,500,8.5,9,7.25\n",
      "ma.csv", On1g());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
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
