// The LLM benchmark importers: vLLM's saved result and AIPerf's (and
// genai-perf's) export become measurement rows with every figure where
// docs/formats.md says it comes from, and what cannot calibrate a slice is
// refused naming the file and field.
#include "llm/bench_import.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace migserve::llm {
namespace {

// A `vllm bench serve --save-result --metadata gpu=... profile=...` file
// (its figures made up for the test).
std::string VllmResult(const std::string& rate, const std::string& more) {
  return R"({"date": "20261129-101500", "backend": "vllm",
    "model_id": "meta-llama/Llama-3.1-8B-Instruct",
    "num_prompts": 400, "gpu": "H100-SXM5-80GB", "profile": "3g.40gb",
    "request_rate": )" +
         rate + R"(, "burstiness": 1.0, "max_concurrency": null,
    "duration": 200.0, "completed": 400, "failed": 0,
    "total_input_tokens": 409600, "total_output_tokens": 102400,
    "request_throughput": 1.98, "output_throughput": 507.5,
    "total_token_throughput": 2537.5,
    "mean_ttft_ms": 150.2, "median_ttft_ms": 131.0, "p99_ttft_ms": 402.0,
    "mean_tpot_ms": 24.1, "median_tpot_ms": 23.5, "p99_tpot_ms": 31.0)" +
         more + "}";
}

TEST(BenchImportTest, AVllmResultGivesARowOfItsMediansAndMeans) {
  std::vector<std::string> warnings;
  auto m = ImportBenchResult(BenchFormat::kVllm, VllmResult("2.0", ""),
                             "r.json", {}, &warnings);
  ASSERT_TRUE(m.ok()) << m.status().message();
  // meta-llama/Llama-3.1-8B-Instruct runs the table's llama-3.1-8b (issue
  // 75: it was written as llama-3.1-8b-instruct, unknown at first use).
  EXPECT_EQ(m->model, "llama-3.1-8b");
  EXPECT_EQ(m->gpu, "H100-SXM5-80GB");
  EXPECT_EQ(m->profile, "3g.40gb");
  EXPECT_DOUBLE_EQ(m->request_rate, 1.98);
  EXPECT_DOUBLE_EQ(m->prompt_tokens, 1024);
  EXPECT_DOUBLE_EQ(m->output_tokens, 256);
  EXPECT_DOUBLE_EQ(m->ttft_p50_ms, 131.0);
  EXPECT_DOUBLE_EQ(m->tpot_p50_ms, 23.5);
  EXPECT_DOUBLE_EQ(m->output_tokens_per_s, 507.5);
  EXPECT_EQ(m->prompt_cv, 0);
  EXPECT_EQ(m->source, "r.json");
  EXPECT_TRUE(warnings.empty());

  // Flags win; --save-detailed's lengths give the spread.
  auto flagged = ImportBenchResult(
      BenchFormat::kVllm,
      VllmResult("2.0",
                 R"(, "input_lens": [512, 1536], "output_lens": [256, 256])"),
      "r.json", {"llama-3.1-8b", "", "2g.20gb"}, &warnings);
  ASSERT_TRUE(flagged.ok()) << flagged.status().message();
  EXPECT_EQ(flagged->model, "llama-3.1-8b");
  EXPECT_EQ(flagged->profile, "2g.20gb");
  EXPECT_DOUBLE_EQ(flagged->prompt_cv, 0.5);
  EXPECT_DOUBLE_EQ(flagged->output_cv, 0);
}

// A checkpoint's id names the table entry whose aliases list it (an
// instruct model has its base's architecture; Qwen's dated instruct
// release, Qwen3-30B-A3B-Instruct-2507, no rule of names finds), else its
// entry without "Meta-" and the tuned variant's "-Instruct"; one the table
// lacks is refused at import, naming the known models and --model, not
// written to fail at first use.
TEST(BenchImportTest, AModelIdIsResolvedAgainstTheTableOrRefused) {
  std::vector<std::string> warnings;
  auto id = [&](const char* model_id) {
    std::string text = VllmResult("2.0", "");
    const std::string ours = "meta-llama/Llama-3.1-8B-Instruct";
    text.replace(text.find(ours), ours.size(), model_id);
    return ImportBenchResult(BenchFormat::kVllm, text, "r.json", {}, &warnings);
  };
  EXPECT_EQ(id("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8").value().model,
            "llama-3.1-8b-fp8");
  EXPECT_EQ(id("Qwen/Qwen2.5-7B-Instruct").value().model, "qwen2.5-7b");
  EXPECT_EQ(id("Qwen/Qwen3-30B-A3B-Instruct-2507").value().model,
            "qwen3-30b-a3b");
  EXPECT_EQ(id("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8").value().model,
            "qwen3-30b-a3b-fp8");
  EXPECT_EQ(id("mistralai/Mistral-7B-Instruct-v0.3").value().model,
            "mistral-7b-v0.3");
  EXPECT_EQ(id("microsoft/Phi-3-mini-4k-instruct").value().model, "phi-3-mini");
  auto unknown = id("acme/Mystery-9B");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.status().message().starts_with(
      "r.json: model: unknown LLM model 'mystery-9b' (known: llama-3.1-8b, "))
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("give --model"), std::string::npos);
}

TEST(BenchImportTest, AVllmBurstOrAFileWithoutItsSliceIsRefused) {
  std::vector<std::string> warnings;
  auto burst = ImportBenchResult(BenchFormat::kVllm, VllmResult("\"inf\"", ""),
                                 "r.json", {}, &warnings);
  ASSERT_FALSE(burst.ok());
  EXPECT_TRUE(burst.status().message().starts_with("r.json: request_rate: "))
      << burst.status().message();
  std::string text = VllmResult("2.0", "");
  text.replace(text.find(R"("profile": "3g.40gb",)"), 21, "");
  auto unnamed =
      ImportBenchResult(BenchFormat::kVllm, text, "r.json", {}, &warnings);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.status().message().find("give --profile"),
            std::string::npos)
      << unnamed.status().message();
  auto broken =
      ImportBenchResult(BenchFormat::kVllm, "[1]", "r.json", {}, &warnings);
  EXPECT_FALSE(broken.ok());
}

// An AIPerf profile_export_aiperf.json (figures made up), latencies in
// `unit`.
std::string AiperfExport(const std::string& unit, double ttft, double itl) {
  return R"({"request_throughput": {"unit": "requests/sec", "avg": 3.5},
    "time_to_first_token": {"unit": ")" +
         unit + R"(", "avg": 300, "p50": )" + std::to_string(ttft) + R"(},
    "inter_token_latency": {"unit": ")" +
         unit + R"(", "avg": 20, "p50": )" + std::to_string(itl) + R"(},
    "input_sequence_length": {"unit": "tokens", "avg": 2000, "std": 400},
    "output_sequence_length": {"unit": "tokens", "avg": 150, "std": 0},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 525},
    "input_config": {"endpoint": {"model_names": ["Qwen/Qwen2.5-7B"]},
                     "loadgen": {"request_rate": 3.5}}})";
}

TEST(BenchImportTest, AnAiperfExportGivesARowInMilliseconds) {
  std::vector<std::string> warnings;
  auto m =
      ImportBenchResult(BenchFormat::kAiperf, AiperfExport("ns", 250e6, 19.5e6),
                        "p.json", {"", "H100-SXM5-80GB", "3g.40gb"}, &warnings);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->model, "qwen2.5-7b");
  EXPECT_DOUBLE_EQ(m->request_rate, 3.5);
  EXPECT_DOUBLE_EQ(m->ttft_p50_ms, 250);
  EXPECT_DOUBLE_EQ(m->tpot_p50_ms, 19.5);
  EXPECT_DOUBLE_EQ(m->prompt_tokens, 2000);
  EXPECT_DOUBLE_EQ(m->prompt_cv, 0.2);
  EXPECT_DOUBLE_EQ(m->output_tokens, 150);
  EXPECT_DOUBLE_EQ(m->output_tokens_per_s, 525);

  auto furlongs =
      ImportBenchResult(BenchFormat::kAiperf, AiperfExport("fortnights", 1, 1),
                        "p.json", {"", "H100-SXM5-80GB", "3g.40gb"}, &warnings);
  ASSERT_FALSE(furlongs.ok());
  EXPECT_TRUE(furlongs.status().message().starts_with(
      "p.json: time_to_first_token.unit: "))
      << furlongs.status().message();
  std::string no_p50 = AiperfExport("ms", 250, 19.5);
  no_p50.replace(no_p50.find(R"("p50": 250)"), 10, R"("p90": 250)");
  auto missing =
      ImportBenchResult(BenchFormat::kAiperf, no_p50, "p.json",
                        {"", "H100-SXM5-80GB", "3g.40gb"}, &warnings);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "p.json: time_to_first_token.p50: missing");
  auto no_gpu =
      ImportBenchResult(BenchFormat::kAiperf, AiperfExport("ms", 250, 19.5),
                        "p.json", {}, &warnings);
  ASSERT_FALSE(no_gpu.ok());
  EXPECT_NE(no_gpu.status().message().find("give --gpu"), std::string::npos);
}

// What an importer took before as a row (issue 76): a rate per minute read
// per second, a run of two models read as the first's, a run whose
// requests nearly all failed.
TEST(BenchImportTest, UnitsModelsAndFailuresAreReadNotAssumed) {
  std::vector<std::string> warnings;
  const BenchImportOptions slice{"", "H100-SXM5-80GB", "3g.40gb"};
  std::string per_minute = AiperfExport("ms", 250, 19.5);
  per_minute.replace(per_minute.find(R"("unit": "requests/sec", "avg": 3.5)"),
                     34, R"("unit": "requests/min", "avg": 210)");
  auto minute = ImportBenchResult(BenchFormat::kAiperf, per_minute, "p.json",
                                  slice, &warnings);
  ASSERT_TRUE(minute.ok()) << minute.status().message();
  EXPECT_DOUBLE_EQ(minute->request_rate, 3.5);
  std::string per_hour = AiperfExport("ms", 250, 19.5);
  per_hour.replace(per_hour.find("requests/sec"), 12, "requests/hour");
  auto hour = ImportBenchResult(BenchFormat::kAiperf, per_hour, "p.json", slice,
                                &warnings);
  ASSERT_FALSE(hour.ok());
  EXPECT_EQ(hour.status().message(),
            "p.json: request_throughput.unit: 'requests/hour' is not a rate "
            "unit read (per sec or per min)");
  std::string two = AiperfExport("ms", 250, 19.5);
  two.replace(two.find(R"(["Qwen/Qwen2.5-7B"])"), 19,
              R"(["Qwen/Qwen2.5-7B", "meta-llama/Llama-3.1-8B"])");
  auto mixed =
      ImportBenchResult(BenchFormat::kAiperf, two, "p.json", slice, &warnings);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find(
                "p.json: input_config model_names: 2 models"),
            std::string::npos)
      << mixed.status().message();
  std::string failing = VllmResult("2.0", "");
  failing.replace(failing.find(R"("completed": 400, "failed": 0)"), 29,
                  R"("completed": 1, "failed": 400)");
  auto errors =
      ImportBenchResult(BenchFormat::kVllm, failing, "r.json", {}, &warnings);
  ASSERT_FALSE(errors.ok());
  EXPECT_EQ(errors.status().message(),
            "r.json: failed: 400 of 401 requests failed: the run measured "
            "errors; measure again once they pass");
}

}  // namespace
}  // namespace migserve::llm
