// Each importer's output is a profile table optimize and validate use end
// to end (issue 15); the converted numbers are checked in src/profile/.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "llm/batcher_simulation.h"
#include "llm/llm_measurement.h"
#include "llm/slice_model.h"
#include "mig/testing/gpus.h"
#include "profile/testing/shipped.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::kA100Profiles;
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
// (boundary/plain_name.h) and writes nothing.
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

// A vLLM run of llama-3.1-8b on an A100's 3g.40gb where decode and prefill
// took 1.5 x the model's times, as `vllm bench serve --save-result` writes
// it.
std::string SlowerVllmRun() {
  const mig::GpuModel& a100 = migserve::testing::A100();
  const mig::Profile& profile = a100.profiles[a100.FindProfile("3g.40gb")];
  llm::EngineOptions slower;
  slower.decode_scale = slower.prefill_scale = 1.5;
  const llm::LlmModel& model =
      *llm::ShippedLlmModels().Find("llama-3.1-8b").value();
  llm::SliceCapacity slice = llm::SliceOf(model, a100, profile, slower).value();
  llm::LlmTerms lengths;
  lengths.prompt_tokens = 1024;
  lengths.output_tokens = 256;
  llm::BatcherStats s = llm::SimulateBatcher(slice, lengths, {}, {1, 2000, 1});
  return fmt::format(
      R"({{"model_id": "meta-llama/Llama-3.1-8B", "request_rate": 1.0,
  "max_concurrency": null, "completed": 500, "failed": 0,
  "total_input_tokens": 512000, "total_output_tokens": 128000,
  "request_throughput": 1.0, "output_throughput": {},
  "median_ttft_ms": {}, "median_tpot_ms": {},
  "gpu": "A100-SXM4-80GB", "profile": "3g.40gb"}})",
      s.output_tokens_per_s, s.ttft_p50_ms, s.tpot_p50_ms);
}

// The decode step of `profile` kept full, as `llm-slices` says it, and its
// basis.
std::pair<double, std::string> FullStep(const nlohmann::json& slices,
                                        const std::string& profile) {
  for (const auto& s : slices["slices"]) {
    if (s["profile"] == profile) {
      return {s["step_ms"].get<double>(), s["basis"].get<std::string>()};
    }
  }
  return {0, ""};
}

// A run whose row a workload would refuse (no prompt tokens) is not
// written, and the import says why.
TEST(ImportCommandTest, AnLlmRunMigserveCannotUseIsNeverWritten) {
  std::string run = SlowerVllmRun();
  run.replace(run.find("\"total_input_tokens\": 512000"), 28,
              "\"total_input_tokens\": 0     ");
  std::string out = TempDir() + "/unusable-runs.csv";
  std::remove(out.c_str());
  CliResult r = Cli({"import", "vllm-bench", WriteTempFile("zero.json", run),
                     "--model", "llama-3.1-8b", "-o", out});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("a row migserve cannot use"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("prompt_tokens"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A second import into the same -o merges into it (issue 75: it printed
// "merged" and then refused its own output as an input); an import that
// names its output as a run is refused.
TEST(ImportCommandTest, ASecondImportMergesIntoTheSameOutput) {
  std::string runs = TempDir() + "/merged-runs.csv";
  std::remove(runs.c_str());
  std::string a = WriteTempFile("run-a.json", SlowerVllmRun());
  std::string b = WriteTempFile("run-b.json", SlowerVllmRun());
  for (const std::string& file : {a, b, a}) {
    CliResult r = Cli(
        {"import", "vllm-bench", file, "--model", "llama-3.1-8b", "-o", runs});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  auto rows = llm::LoadLlmMeasurements(runs);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->size(), 2u);  // a's again replaced a's
  CliResult self = Cli({"import", "vllm-bench", runs, "-o", runs});
  EXPECT_EQ(self.code, 2);
  EXPECT_NE(self.err.find("is an input of this command"), std::string::npos)
      << self.err;
}

TEST(ImportCommandTest, MeasuredLlmRunsCorrectTheCreditsAndSayTheirBasis) {
  std::string runs = TempDir() + "/llm-runs.csv";
  CliResult r = Cli({"import", "vllm-bench",
                     WriteTempFile("vllm-1qps.json", SlowerVllmRun()),
                     "--model", "llama-3.1-8b", "-o", runs});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("1 LLM runs"), std::string::npos) << r.err;

  auto slices = [&](bool measured) {
    std::vector<std::string> args = {
        "llm-slices",     "--model",  "llama-3.1-8b", "--gpu",
        "A100-SXM4-80GB", "--format", "json"};
    if (measured) args.insert(args.end(), {"--measurements", runs});
    CliResult c = Cli(args);
    EXPECT_EQ(c.code, 0) << c.err;
    return nlohmann::json::parse(c.out);
  };
  nlohmann::json modelled = slices(false), measured = slices(true);
  auto [step, basis] = FullStep(measured, "3g.40gb");
  EXPECT_EQ(basis, "measured");
  EXPECT_NEAR(step / FullStep(modelled, "3g.40gb").first, 1.5, 0.05);
  EXPECT_EQ(FullStep(measured, "7g.80gb").second, "calibrated on 3g.40gb");
  EXPECT_EQ(FullStep(modelled, "7g.80gb").second, "modelled");

  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "credit searches: the optimized build runs them";
  }
  // The same service with and without the run: its credits fall by about
  // the third the run took off, and serve says what backs its figures.
  const std::string service =
      "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 12,\n"
      "     ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024,\n"
      "     output_tokens: 256}\n";
  std::string plain = WriteTempFile(
      "llm-plain.yaml", "gpu: A100-SXM4-80GB\nservices:\n" + service);
  std::string calibrated = WriteTempFile(
      "llm-calibrated.yaml",
      "gpu: A100-SXM4-80GB\nllm_measurements: llm-runs.csv\nservices:\n" +
          service);
  // Each profile's credit in the deployment optimize writes.
  auto credits = [&](const std::string& w) {
    std::string d = w + ".json";
    CliResult o = Cli({"optimize", "-w", w, "-p", kA100Profiles, "-o", d});
    EXPECT_EQ(o.code, 0) << o.err;
    std::map<std::string, double> by_profile;
    const nlohmann::json deployment =
        nlohmann::json::parse(ReadFile(d).value());
    for (const auto& gpu : deployment["gpus"]) {
      for (const auto& i : gpu["instances"]) {
        by_profile[i["profile"]] = i["throughput"].get<double>();
      }
    }
    return std::pair{by_profile, d};
  };
  auto [before, plain_d] = credits(plain);
  auto [after, calibrated_d] = credits(calibrated);
  int compared = 0;
  for (const auto& [profile, credit] : after) {
    if (!before.contains(profile)) continue;
    EXPECT_LT(credit, before[profile] / 1.2) << profile;
    ++compared;
  }
  EXPECT_GE(compared, 1);
  CliResult serve = Cli({"serve", "-d", calibrated_d, "-w", calibrated, "-p",
                         kA100Profiles, "--format", "json"});
  ASSERT_EQ(serve.code, 0) << serve.err;
  const nlohmann::json served = nlohmann::json::parse(serve.out);
  const auto& llm = served["services"][0]["llm"];
  EXPECT_FALSE(llm["modelled"].get<bool>()) << llm.dump();
  EXPECT_NE(llm["basis"].get<std::string>().find("3g.40gb"), std::string::npos)
      << llm.dump();
  // A comparison routing applies to the others only, and serve says so.
  serve = Cli({"serve", "-d", calibrated_d, "-w", calibrated, "-p",
               kA100Profiles, "--routing", "round-robin"});
  EXPECT_EQ(serve.code, 0) << serve.err;
  EXPECT_NE(serve.err.find("--routing round-robin applies to the other "
                           "services; the LLM services (chat) are served"),
            std::string::npos)
      << serve.err;
}

TEST(ImportCommandTest, EveryImporterHasHelp) {
  for (const char* kind : {"parvagpu", "perf-analyzer", "model-analyzer",
                           "migperf", "vllm-bench", "aiperf"}) {
    CliResult r = Cli({"import", kind, "--help"});
    EXPECT_EQ(r.code, 0) << kind;
    EXPECT_NE(r.out.find("-o,--output"), std::string::npos) << kind;
  }
}

}  // namespace
}  // namespace migserve::cli
