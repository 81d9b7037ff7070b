// The LLM capacity model: the shipped table's KV cache sizes, the slices'
// room against the figures docs/llm.md cites, the batcher simulation
// against its closed form when requests never meet, and credits that keep
// the p99 SLOs and grow with the slice.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "llm/batcher_simulation.h"
#include "llm/llm_credit.h"
#include "llm/llm_model.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"
#include "queueing/credit_cache.h"
#include "util/test_util.h"

namespace migserve::llm {
namespace {

const mig::GpuModel& H100() {
  return *mig::GpuCatalog::Default().Find("H100-SXM5-80GB").value();
}
const mig::Profile& Profile(const char* name) {
  return H100().profiles[H100().FindProfile(name)];
}
const LlmModel& Llama8b() {
  return *ShippedLlmModels().Find("llama-3.1-8b").value();
}

TEST(LlmModelTest, TheShippedTableGivesEachModelsKvCachePerToken) {
  ASSERT_GE(ShippedLlmModels().models().size(), 5u);
  // 2 (K and V) x 32 layers x 8 heads x 128 x 2 bytes: 128 KiB.
  EXPECT_DOUBLE_EQ(Llama8b().KvBytesPerToken(), 128 * 1024);
  EXPECT_DOUBLE_EQ(Llama8b().WeightBytes(), 16.06e9);
  EXPECT_DOUBLE_EQ(
      ShippedLlmModels().Find("qwen2.5-7b").value()->KvBytesPerToken(),
      56 * 1024);
  EXPECT_EQ(ShippedLlmModels().Find("gpt-5").status().code(),
            Status::Code::kNotFound);
}

TEST(LlmModelTest, ATableWithAMistakeNamesItsLineAndField) {
  auto t = ParseLlmModels(
      "models:\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n"
      "  - {name: b, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64, "
      "dtype: int3}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:3: models[1].dtype: must be bf16, fp16 or fp8, got int3");
  t = ParseLlmModels(
      "models:\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:3: models[1].name: 'a' is already on line 2");
}

// Llama-3.1-8B in BF16 on H100 slices (docs/llm.md): a 1g.10gb cannot hold
// the weights, a 2g.20gb holds about 5.7k tokens of KV cache, a 3g.40gb
// about 152k.
TEST(SliceModelTest, TheSlicesRoomForTheKvCache) {
  auto g1 = SliceOf(Llama8b(), H100(), Profile("1g.10gb"));
  EXPECT_EQ(g1.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(g1.status().message().find("does not fit 1g.10gb"),
            std::string::npos)
      << g1.status().message();
  auto g2 = SliceOf(Llama8b(), H100(), Profile("2g.20gb"));
  ASSERT_TRUE(g2.ok());
  EXPECT_NEAR(g2->kv_tokens, 5700, 100);
  auto g3 = SliceOf(Llama8b(), H100(), Profile("3g.40gb"));
  ASSERT_TRUE(g3.ok());
  EXPECT_NEAR(g3->kv_tokens, 152000, 1500);
  // A decode step reads the weights at the slice's bandwidth: 4 of 8
  // memory slices of 3,350 GB/s at 80%.
  EXPECT_NEAR(g3->weight_read_ms, 16.06e9 / (3350e9 / 2 * 0.8) * 1e3, 1e-9);
  EXPECT_LT(g3->weight_read_ms, g2->weight_read_ms);
}

// An FP8 model's prefill runs at FP8's tensor rate on an H100 (twice
// BF16's), at BF16's on an A100 (no FP8 tensor cores); its weights are
// half as many bytes on both.
TEST(SliceModelTest, AnFp8ModelPrefillsAtTheGpusFp8Rate) {
  const LlmModel& fp8 = *ShippedLlmModels().Find("llama-3.1-8b-fp8").value();
  auto h100_bf16 = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  auto h100_fp8 = SliceOf(fp8, H100(), Profile("3g.40gb")).value();
  EXPECT_NEAR(h100_fp8.prefill_ms_per_token,
              h100_bf16.prefill_ms_per_token * 989 / 1979, 1e-12);
  EXPECT_NEAR(h100_fp8.weight_read_ms, h100_bf16.weight_read_ms / 2, 1e-9);
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Profile& a100_3g = a100.profiles[a100.FindProfile("3g.40gb")];
  EXPECT_DOUBLE_EQ(
      SliceOf(fp8, a100, a100_3g).value().prefill_ms_per_token,
      SliceOf(Llama8b(), a100, a100_3g).value().prefill_ms_per_token);
}

// Requests that never meet (one every 100 s): each sees its closed form,
// the first token after one step that prefills its prompt, each later one
// after a step over its context.
TEST(BatcherSimulationTest, ALoneRequestTakesItsStepsClosedForm) {
  SliceCapacity slice = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  LlmTerms terms{2000, 100, 512, 64, 0, 0};
  BatcherStats s = SimulateBatcher(slice, terms, {}, {0.01, 200, 7});
  double ttft = slice.StepMs(512, 512), decode = 0;
  for (int k = 1; k < 64; ++k) decode += slice.StepMs(512 + k, 0);
  EXPECT_NEAR(s.ttft_p50_ms, ttft, 1e-6);
  EXPECT_NEAR(s.tpot_p50_ms, decode / 63, 1e-6);
  EXPECT_NEAR(s.latency_p50_ms, ttft + decode, 1e-6);
  EXPECT_EQ(s.counted, 180);
}

TEST(LlmCreditTest, CreditsKeepBothP99sAndGrowWithTheSlice) {
  LlmTerms terms{2000, 100, 1024, 256, 0.5, 0.5};
  queueing::Traffic traffic;
  LlmCredit g1 =
      CreditOf(Llama8b(), H100(), Profile("1g.10gb"), terms, traffic);
  EXPECT_EQ(g1.rate, 0);
  EXPECT_NE(g1.why.find("does not fit"), std::string::npos) << g1.why;
  double last = 0;
  // Under ASan one slice (a credit search takes seconds there).
  std::vector<const char*> slices = {"2g.20gb", "3g.40gb", "7g.80gb"};
  if (testing::kAddressSanitizer) slices.resize(1);
  for (const char* p : slices) {
    LlmCredit c = CreditOf(Llama8b(), H100(), Profile(p), terms, traffic);
    EXPECT_GT(c.rate, last) << p;
    // Within 95% of each SLO (the p99 estimate's own error is the rest).
    EXPECT_LE(c.at_rate.ttft_p99_ms, 0.95 * terms.ttft_ms) << p;
    EXPECT_LE(c.at_rate.tpot_p99_ms, 0.95 * terms.tpot_ms) << p;
    // 5% more than the credit leaves that share on one of the seeds the
    // credit is searched with.
    bool over = false;
    for (uint64_t seed : {1, 2, 3}) {
      BatcherStats above =
          SimulateBatcher(c.slice, terms, traffic, {c.rate * 1.05, 4000, seed});
      over = over || above.ttft_p99_ms > 0.95 * terms.ttft_ms ||
             above.tpot_p99_ms > 0.95 * terms.tpot_ms;
    }
    EXPECT_TRUE(over) << p;
    last = c.rate;
  }
}

// A credit found once is read from the credit cache the next time, and is
// the same credit.
TEST(LlmCreditTest, ACreditIsSearchedOnceWithACache) {
  std::string path = testing::TempDir() + "/llm-credits.db";
  std::remove(path.c_str());
  queueing::CreditCache cache(path, "test-build", nullptr);
  queueing::ScopedCreditCache scoped(&cache);
  LlmTerms terms{2000, 100, 1024, 256, 0.5, 0.5};
  LlmCredit first = CreditOf(Llama8b(), H100(), Profile("2g.20gb"), terms, {});
  ASSERT_GT(first.rate, 0);
  EXPECT_EQ(cache.hits(), 0);
  LlmCredit again = CreditOf(Llama8b(), H100(), Profile("2g.20gb"), terms, {});
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(again.rate, first.rate);
  EXPECT_EQ(again.at_rate.tpot_p99_ms, first.at_rate.tpot_p99_ms);
  // Another SLO is another question.
  terms.tpot_ms = 90;
  CreditOf(Llama8b(), H100(), Profile("2g.20gb"), terms, {});
  EXPECT_EQ(cache.hits(), 1);
}

}  // namespace
}  // namespace migserve::llm
