// Each importer's output is a profile table optimize and validate use end
// to end (issue 15); the converted numbers are checked in src/profile/.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;
using testing::TempDir;
using testing::WriteTempFile;

// Optimizes `services` on A100-80GB with `profiles` and checks the result
// validates; returns the deployment.
nlohmann::json OptimizeAndValidate(const std::string& profiles,
                                   const std::string& services) {
  std::string w = WriteTempFile("import.yaml",
                                "gpu: A100-SXM4-80GB\nservices:\n" + services);
  std::string d = TempDir() + "/import.json";
  CliResult o =
      Cli({"optimize", "-w", w, "-p", profiles, "--algo", "milp", "-o", d});
  EXPECT_EQ(o.code, 0) << o.err;
  CliResult v = Cli({"validate", "-w", w, "-p", profiles, "-d", d});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  return nlohmann::json::parse(ReadFile(d).value());
}

TEST(ImportCommandTest, PerfAnalyzerFilesServeAService) {
  std::string out = TempDir() + "/pa-profiles.csv";
  CliResult r = Cli({"import", "perf-analyzer",
                     SourcePath("src/profile/testdata/"
                                "resnet50__A100-SXM4-80GB__1g.10gb__b8.csv"),
                     "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  // 745.6/s at batch 8 is 1.9x what one batch at a time in 20.4 ms serves:
  // the measured server batched, and the import says so.
  EXPECT_NE(r.err.find("migserve: warning: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the server batched requests together"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("import: 1 profile rows -> " + out + "\n"),
            std::string::npos)
      << r.err;
  nlohmann::json d =
      OptimizeAndValidate(out,
                          "  - {name: r, model: resnet50, throughput: 2000, "
                          "latency_ms: 200}\n");
  for (const auto& gpu : d["gpus"]) {
    for (const auto& instance : gpu["instances"]) {
      EXPECT_EQ(instance["profile"], "1g.10gb");
    }
  }
}

// A measurement of no throughput (a run that failed) makes no profile row:
// the import refuses, naming the field, and writes nothing.
TEST(ImportCommandTest, ARowTheReaderWouldRefuseIsNeverWritten) {
  std::string in = WriteTempFile(
      "resnet50__A100-SXM4-80GB__1g.10gb__b8.csv",
      "Concurrency,Inferences/Second,p50 latency,p90 latency,p99 latency\n"
      "1,0,20412,21055,22104\n");
  std::string out = TempDir() + "/zero.csv";
  CliResult r =
      Cli({"import", "perf-analyzer", in, "--concurrency", "1", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("throughput: must be from 0.001 to 1e+09, got 0"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(ReadFile(out).ok());
}

// A model name goes into the profile CSV, then into manifests and the
// proxy's nginx configuration: the importer refuses one that is not plain
// (util/plain_name.h) and writes nothing.
TEST(ImportCommandTest, AModelNameThatIsNotPlainIsRefused) {
  std::string in = WriteTempFile(
      "resnet50__A100-SXM4-80GB__1g.10gb__b8.csv",
      "Concurrency,Inferences/Second,p50 latency,p90 latency,p99 latency\n"
      "1,100,20412,21055,22104\n");
  std::string out = TempDir() + "/named.csv";
  CliResult r = Cli({"import", "perf-analyzer", in, "--concurrency", "1",
                     "--model", "m;}", "-o", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(": the model (--model or the file name) must be 1 to "
                       "63 letters"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(ReadFile(out).ok());
}

TEST(ImportCommandTest, ModelAnalyzerResultsServeTwoModels) {
  std::string out = TempDir() + "/ma-profiles.csv";
  std::filesystem::remove(out);
  CliResult r =
      Cli({"import", "model-analyzer",
           SourcePath("src/profile/testdata/metrics-model-inference.csv"),
           "--gpu", "A100-SXM4-80GB", "--profile", "MIG 1g.10gb", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "import: 8 profile rows -> " + out + "\n");
  nlohmann::json d = OptimizeAndValidate(
      out,
      "  - {name: r, model: resnet50, throughput: 3000, latency_ms: 100}\n"
      "  - {name: b, model: bert, throughput: 50, latency_ms: 100}\n");
  EXPECT_EQ(d["summary"]["gpus"], 1);
}

// One Model Analyzer run per MIG profile into one table: a second profile's
// rows join the first's; measuring a profile again replaces its rows.
TEST(ImportCommandTest, ModelAnalyzerRunsMergeIntoOneProfile) {
  const std::string out = TempDir() + "/ma-merged.csv";
  std::filesystem::remove(out);
  auto import = [&](const std::string& profile) {
    return Cli({"import", "model-analyzer",
                SourcePath("src/profile/testdata/metrics-model-inference.csv"),
                "--gpu", "A100-SXM4-80GB", "--profile", profile, "-o", out});
  };
  auto rows = [&] {
    std::string text = ReadFile(out).value();
    return std::count(text.begin(), text.end(), '\n') - 1;
  };
  ASSERT_EQ(import("1g.10gb").code, 0);
  EXPECT_EQ(rows(), 8);
  CliResult second = import("2g.20gb");
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.err, "import: merged into " + out +
                            ": 8 rows kept, 0 replaced, 8 new\n");
  EXPECT_EQ(rows(), 16);
  CliResult again = import("1g.10gb");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err, "import: merged into " + out +
                           ": 8 rows kept, 8 replaced, 0 new\n");
  EXPECT_EQ(rows(), 16);
}

TEST(ImportCommandTest, MigPerfTreeAndShippedConversionAgree) {
  std::string out = TempDir() + "/mp-profiles.csv";
  CliResult r = Cli({"import", "migperf",
                     SourcePath("src/profile/testdata/migperf"), "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("import: 6 profile rows -> " + out), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("migserve: warning: "), std::string::npos);
  // Every converted fixture row is in the shipped conversion, word for word.
  std::string shipped =
      ReadFile(SourcePath("data/profiles/migperf.csv")).value();
  std::string mine = ReadFile(out).value();
  size_t start = mine.find('\n') + 1;
  for (size_t end; (end = mine.find('\n', start)) != std::string::npos;
       start = end + 1) {
    std::string line = mine.substr(start, end - start + 1);
    EXPECT_NE(shipped.find(line), std::string::npos) << line;
  }
  OptimizeAndValidate(SourcePath("data/profiles/migperf.csv"),
                      "  - {name: q, model: bert-base, throughput: 2000, "
                      "latency_ms: 100}\n");
}

TEST(ImportCommandTest, EveryImporterHasHelp) {
  for (const char* kind :
       {"parvagpu", "perf-analyzer", "model-analyzer", "migperf"}) {
    CliResult r = Cli({"import", kind, "--help"});
    EXPECT_EQ(r.code, 0) << kind;
    EXPECT_NE(r.out.find("-o,--output"), std::string::npos) << kind;
  }
}

}  // namespace
}  // namespace migserve::cli
