#include "profile/migperf_import.h"

#include <gtest/gtest.h>

#include "util/test_util.h"

namespace migserve::profile {
namespace {

// Six rows copied from MIGProfiler's data (testdata/migperf/NOTICE.md).
const std::string kDir = testing::SourcePath("src/profile/testdata/migperf");

TEST(MigPerfImportTest, ConvertsEveryLayoutWithHandComputedValues) {
  auto result = ImportMigPerf(kDir);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  struct Expected {
    std::string model, gpu, profile;
    int batch;
    double throughput, latency_ms, memory_gb;
  };
  const std::vector<Expected> expected = {
      // A100-40GB names instances by memory: 5 GB is 1g.5gb, 40 GB 7g.40gb.
      {"paraphrase-multilingual-MiniLM-L12-v2", "A100-SXM4-40GB", "1g.5gb", 8,
       734.04, 10.9, 1.949},  // 1995.769 MiB / 1024
      {"paraphrase-multilingual-MiniLM-L12-v2", "A100-SXM4-40GB", "7g.40gb", 1,
       87.46, 11.43, 2.271},  // 2326 MiB
      {"vision_transformer", "A100-SXM4-80GB", "7g.80gb", 1, 185.7, 5.38,
       2.004},
      {"resnet50", "A100-SXM4-80GB", "1g.10gb", 8, 287.87, 27.79, 1.497},
      // The NLP file counted 3 samples a batch: 475.07 and 67.5 in the
      // file; 1 x 1000 / 6.31 and 8 x 1000 / 44.45 here.
      {"bert-base", "A100-SXM4-80GB", "7g.80gb", 1, 158.479, 6.31, 1.834},
      {"bert-base", "A100-SXM4-80GB", "1g.10gb", 8, 179.978, 44.45, 1.491},
  };
  ASSERT_EQ(result->profiles.rows.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const ProfileRow& r = result->profiles.rows[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(r.model, expected[i].model);
    EXPECT_EQ(r.gpu, expected[i].gpu);
    EXPECT_EQ(r.profile, expected[i].profile);
    EXPECT_EQ(r.batch, expected[i].batch);
    EXPECT_EQ(r.procs, 1);
    EXPECT_DOUBLE_EQ(r.throughput, expected[i].throughput);
    EXPECT_DOUBLE_EQ(r.latency_ms, expected[i].latency_ms);
    EXPECT_DOUBLE_EQ(*r.memory_gb, expected[i].memory_gb);
  }
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_EQ(result->warnings[0],
            kDir +
                "/A100-80g/infer/nlp/integrated_result_bsz.csv: throughput "
                "differs from batch_size x 1000 / latency by more than 5% in "
                "2 of 2 rows; recomputed as that");
}

TEST(MigPerfImportTest, WhatCannotBeReadIsNamed) {
  ImportedProfiles out;
  EXPECT_EQ(ImportMigPerfCsv("model_name,batch_size,latency,throughput,"
                             "instance_memory\nm,1,10,100,15\n",
                             "f.csv", "A100-SXM4-40GB", &out)
                .message(),
            "f.csv:2: instance_memory: expected 5, 10, 20 or 40, got 15");
  EXPECT_EQ(ImportMigPerfCsv("model_name,batch_size,latency,throughput\n",
                             "f.csv", "A100-SXM4-40GB", &out)
                .message(),
            "f.csv:1: header: missing column 'mig_profile' (has: model_name, "
            "batch_size, latency, throughput)");
  EXPECT_EQ(ImportMigPerf(testing::SourcePath("src/profile/testdata/migperf/"
                                              "A100-80g/infer/cv/"
                                              "integrated_result.csv"))
                .status()
                .code(),
            Status::Code::kNotFound);
}

}  // namespace
}  // namespace migserve::profile
