#include "profile/profile_csv.h"

#include <gtest/gtest.h>

namespace migserve::profile {
namespace {

TEST(ProfileCsvTest, ColumnsInAnyOrderWithDefaults) {
  auto table = ParseProfileCsv(
      "gpu,model,profile,batch,throughput,latency_ms\n"
      "A100-SXM4-80GB,resnet50,7g.79gb,8,900.5,12\n",
      "p.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 1u);
  const ProfileRow& r = table->rows[0];
  EXPECT_EQ(r.model, "resnet50");
  EXPECT_EQ(r.profile, "7g.80gb");  // alias made canonical
  EXPECT_EQ(r.procs, 1);
  EXPECT_DOUBLE_EQ(r.throughput, 900.5);
  EXPECT_FALSE(r.memory_gb.has_value());
  EXPECT_EQ(r.line, 2);
}

TEST(ProfileCsvTest, RoundTrips) {
  ProfileTable t;
  t.rows.push_back({"bert", "A100-SXM4-80GB", "1g.10gb", 4, 2, 190.5, 42.25,
                    3.5, std::nullopt, std::nullopt, std::nullopt, 0});
  EXPECT_EQ(FormatProfileCsv(t),
            "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n"
            "bert,A100-SXM4-80GB,1g.10gb,4,2,190.5,42.25,3.5\n");
  auto back = ParseProfileCsv(FormatProfileCsv(t), "x.csv");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->rows.size(), 1u);
  EXPECT_EQ(back->rows[0].procs, 2);
  EXPECT_DOUBLE_EQ(back->rows[0].latency_ms, 42.25);
  EXPECT_DOUBLE_EQ(*back->rows[0].memory_gb, 3.5);
}

TEST(ProfileCsvTest, PercentileColumnsAreOptionalAndKept) {
  auto table = ParseProfileCsv(
      "model,gpu,profile,batch,throughput,latency_ms,latency_p99_ms,"
      "latency_p50_ms\n"
      "m,A100-SXM4-80GB,1g.10gb,1,100,9.5,21.25,10\n"
      "m,A100-SXM4-80GB,2g.20gb,1,200,9.5,,\n",
      "p.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_DOUBLE_EQ(*table->rows[0].latency_p50_ms, 10);
  EXPECT_FALSE(table->rows[0].latency_p90_ms.has_value());
  EXPECT_DOUBLE_EQ(*table->rows[0].latency_p99_ms, 21.25);
  EXPECT_FALSE(table->rows[1].latency_p99_ms.has_value());
  EXPECT_EQ(FormatProfileCsv(*table),
            "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb,"
            "latency_p50_ms,latency_p90_ms,latency_p99_ms\n"
            "m,A100-SXM4-80GB,1g.10gb,1,1,100,9.5,,10,,21.25\n"
            "m,A100-SXM4-80GB,2g.20gb,1,1,200,9.5,,,,\n");
  auto bad = ParseProfileCsv(
      "model,gpu,profile,batch,throughput,latency_ms,latency_p90_ms\n"
      "m,A100-SXM4-80GB,1g.10gb,1,100,9.5,-1\n",
      "p.csv");
  EXPECT_EQ(bad.status().message(),
            "p.csv:2: latency_p90_ms: must be from 0.001 to 1e+07, got -1");
}

struct BadCase {
  const char* csv;
  const char* message;
};

// Test names show the expected message, not the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* out) { *out << c.message; }

class ProfileCsvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ProfileCsvErrorTest, NamesFileLineAndField) {
  auto table = ParseProfileCsv(GetParam().csv, "p.csv");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(table.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ProfileCsvErrorTest,
    ::testing::Values(
        BadCase{"model,gpu,profile,batch,latency_ms\n",
                "p.csv:1: header: missing column 'throughput'"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,abc,3,\n",
                "p.csv:2: throughput: not a finite number: 'abc'"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,-5,3,\n",
                "p.csv:2: throughput: must be from 0.001 to 1e+09, got -5"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,0,3,\n",
                "p.csv:2: throughput: must be from 0.001 to 1e+09, got 0"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,1e-320,3,\n",
                "p.csv:2: throughput: must be from 0.001 to 1e+09, got 1e-320"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,inf,3,\n",
                "p.csv:2: throughput: not a finite number: 'inf'"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,5,nan,\n",
                "p.csv:2: latency_ms: not a finite number: 'nan'"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,5,0,\n",
                "p.csv:2: latency_ms: must be from 0.001 to 1e+07, got 0"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,,3,\n",
                "p.csv:2: throughput: missing"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,0,1,5,3,\n",
                "p.csv:2: batch: must be a positive integer, got '0'"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,T4,1g.10gb,1,1,5,3,\n",
                "p.csv:2: gpu: unknown GPU 'T4' (known: A100-PCIE-40GB, "
                "A100-PCIE-80GB, A100-SXM4-40GB, A100-SXM4-80GB, A30-24GB, "
                "B200-180GB, GH200-144GB, GH200-96GB, H100-NVL-94GB, "
                "H100-PCIE-80GB, H100-SXM5-80GB, H200-141GB, H200-NVL-141GB, "
                "L4-24GB)"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,5g.50gb,1,1,5,3,\n",
                "p.csv:2: profile: unknown profile '5g.50gb' on "
                "A100-SXM4-80GB (known: 1g.10gb, 1g.10gb+me, 1g.20gb, "
                "2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)"},
        BadCase{"model;gpu;profile;batch;procs;throughput;latency_ms\n"
                "m;A100-SXM4-80GB;1g.10gb;1;1;5;3\n",
                "p.csv:1: header: fields are separated by ';'; profile CSVs "
                "are comma-separated"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,5\n",
                "p.csv:2: row: has 6 fields, the header has 8"},
        BadCase{"model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb"
                "\nm,A100-SXM4-80GB,1g.10gb,1,1,5,3,\n\n"
                "m,A100-SXM4-80GB,1g.10gb,1,1,6,3,\n",
                "p.csv:4: row: duplicates line 2 (m A100-SXM4-80GB 1g.10gb "
                "batch 1 procs 1)"}));

// Excel's "CSV UTF-8" (a byte order mark, CRLF line ends) and profile names
// as nvidia-smi prints them read as the canonical file.
TEST(ProfileCsvTest, ReadsExcelsCsvAndNvidiaSmiProfileNames) {
  auto table = ParseProfileCsv(
      "\xEF\xBB\xBFmodel,gpu,profile,batch,procs,throughput,latency_ms\r\n"
      "m,A100-SXM4-80GB,MIG 1g.10gb,1,1,5,3\r\n"
      "m,A100-SXM4-80GB,7g.79gb,1,1,50,2\r\n",
      "p.csv");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].model, "m");
  EXPECT_EQ(table->rows[0].profile, "1g.10gb");
  EXPECT_EQ(table->rows[1].profile, "7g.80gb");
  EXPECT_DOUBLE_EQ(table->rows[1].latency_ms, 2);
}

TEST(ProfileCsvTest, MissingFileIsNotFound) {
  auto table = LoadProfileCsv("/no/such/profiles.csv");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace migserve::profile
