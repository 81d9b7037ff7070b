// The LLM capacity model: the shipped table's KV cache sizes, the slices'
// room against the figures docs/llm.md cites, the batcher simulation
// against its closed form when requests never meet, and credits that keep
// the p99 SLOs and grow with the slice.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "llm/balanced_batchers.h"
#include "llm/batcher_simulation.h"
#include "llm/continuous_batcher.h"
#include "llm/llm_credit.h"
#include "llm/llm_model.h"
#include "llm/request_lengths.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"
#include "queueing/credit_cache.h"
#include "queueing/p99_capacity.h"
#include "queueing/router_kind.h"
#include "util/field_count.h"
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
            "m.yaml:3: models[1].dtype: must be bf16, fp16, fp8 or mxfp4, got "
            "int3");
  t = ParseLlmModels(
      "models:\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:3: models[1].name: 'a' is already on line 2");
  // An alias names one model, whatever the organisation or letter case.
  t = ParseLlmModels(
      "models:\n"
      "  - {name: a, aliases: [org/A-1B], parameters_b: 1, layers: 2, "
      "kv_heads: 2, head_dim: 64}\n"
      "  - {name: b, aliases: [other/a-1b], parameters_b: 1, layers: 2, "
      "kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:3: models[1].aliases: 'other/a-1b' is already a's (line "
            "2)");
  // An alias that is another model's name, or no name vLLM can serve.
  t = ParseLlmModels(
      "models:\n"
      "  - {name: a, aliases: [b], parameters_b: 1, layers: 2, kv_heads: 2, "
      "head_dim: 64}\n"
      "  - {name: b, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:2: models[0].aliases: 'b' is the name of the model on "
            "line 3");
  for (const char* alias : {"''", "'a b'", "'x/y/z'", "'a|b'"}) {
    t = ParseLlmModels(
        fmt::format("models:\n  - {{name: a, aliases: [{}], parameters_b: 1, "
                    "layers: 2, kv_heads: 2, head_dim: 64}}\n",
                    alias),
        "m.yaml");
    EXPECT_NE(t.status().message().find("m.yaml:2: models[0].aliases: must "
                                        "be 1 to 128 letters"),
              std::string::npos)
        << alias << ": " << t.status().message();
  }
}

// A table of many aliases is checked in one pass (issue 92: 100,000
// aliases hung the reader, each alias compared with every other).
TEST(LlmModelTest, ATableOfManyAliasesIsRead) {
  std::string yaml =
      "models:\n  - {name: a, parameters_b: 1, layers: 2, "
      "kv_heads: 2, head_dim: 64, aliases: [";
  for (int i = 0; i < 50000; ++i)
    yaml += fmt::format("{}org/m-{}", i ? ", " : "", i);
  yaml += "]}\n";
  auto t = ParseLlmModels(yaml, "m.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->models()[0].aliases.size(), 50000u);
  EXPECT_EQ(t->FindAlias("ORG/M-49999")->name, "a");
}

// The shipped table's aliases are Hugging Face ids: with or without the
// organisation, in any letter case, each names its entry.
TEST(LlmModelTest, AliasesNameTheirEntry) {
  const LlmModelTable& table = ShippedLlmModels();
  ASSERT_NE(table.FindAlias("meta-llama/Llama-3.1-8B-Instruct"), nullptr);
  EXPECT_EQ(table.FindAlias("meta-llama/Llama-3.1-8B-Instruct")->name,
            "llama-3.1-8b");
  ASSERT_NE(table.FindAlias("llama-3.1-8b-instruct"), nullptr);
  EXPECT_EQ(table.FindAlias("llama-3.1-8b-instruct")->name, "llama-3.1-8b");
  EXPECT_EQ(table.FindAlias("openai/gpt-oss-20b")->name, "gpt-oss-20b");
  EXPECT_EQ(table.FindAlias("acme/Mystery-9B"), nullptr);
  for (const LlmModel& m : table.models()) {
    EXPECT_FALSE(m.aliases.empty()) << m.name;
  }
}

// A replica answers to its service, its model and the model's Hugging Face
// ids, the service first (vLLM's metrics name the first).
TEST(LlmModelTest, ServedNamesAreTheServiceTheModelAndItsAliases) {
  auto entry = [](const char* name) {
    return ShippedLlmModels().Find(name).value();
  };
  EXPECT_EQ(ServedNames("chat", "qwen2.5-7b", entry("qwen2.5-7b")),
            (std::vector<std::string>{"chat", "qwen2.5-7b", "Qwen/Qwen2.5-7B",
                                      "Qwen/Qwen2.5-7B-Instruct"}));
  EXPECT_EQ(ServedNames("gpt-oss-20b", "gpt-oss-20b", entry("gpt-oss-20b")),
            (std::vector<std::string>{"gpt-oss-20b", "openai/gpt-oss-20b"}));
  EXPECT_EQ(ServedNames("x", "not-in-the-table", nullptr),
            (std::vector<std::string>{"x", "not-in-the-table"}));
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
  EXPECT_NEAR(g3->shared_read_ms, 16.06e9 / (3350e9 / 2 * 0.8) * 1e3, 1e-9);
  EXPECT_LT(g3->shared_read_ms, g2->shared_read_ms);
}

// A compute slice's tensor rate is its SMs' share, not its compute
// slices': an A100's 3g.40gb has 42 of 108 SMs (not 3/7), an H100's 60 of
// 132 (not 3/7 either: more).
TEST(SliceModelTest, ASliceComputesAtItsSmsShare) {
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Profile& a100_3g = a100.profiles[a100.FindProfile("3g.40gb")];
  EXPECT_DOUBLE_EQ(PeaksOf(Llama8b(), a100, a100_3g).tflops, 312.0 * 42 / 108);
  EXPECT_DOUBLE_EQ(PeaksOf(Llama8b(), H100(), Profile("3g.40gb")).tflops,
                   989.0 * 60 / 132);
  EXPECT_DOUBLE_EQ(PeaksOf(Llama8b(), H100(), Profile("1g.20gb")).tflops,
                   989.0 * 26 / 132);
  // A token through Llama-3.1-8B: 2 x 8.03e9 operations at 50%.
  auto s = SliceOf(Llama8b(), a100, a100_3g).value();
  EXPECT_NEAR(s.ms_per_token, 16.06e9 / (312e12 * 42 / 108 * 0.5) * 1e3, 1e-12);
}

// A step takes the longer of its reads and its products: one decode is
// memory bound (the weights' read), 256 decodes over long contexts on a
// slice of few SMs and an 8B FP8 model is compute bound.
TEST(SliceModelTest, AStepIsTheLongerOfItsReadsAndItsProducts) {
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Profile& g1 = a100.profiles[a100.FindProfile("1g.20gb")];
  const LlmModel& fp8 = *ShippedLlmModels().Find("llama-3.1-8b-fp8").value();
  auto s = SliceOf(fp8, a100, g1).value();
  StepLoad one{1, 1000, 0, 1000};
  EXPECT_DOUBLE_EQ(s.StepMs(one), s.step_overhead_ms + s.MemoryMs(one));
  EXPECT_GT(s.MemoryMs(one), s.ComputeMs(one));
  StepLoad full{256, 256 * 1100, 0, 256 * 1100.0};
  EXPECT_GT(s.ComputeMs(full), s.MemoryMs(full));
  EXPECT_DOUBLE_EQ(s.StepMs(full), s.step_overhead_ms + s.ComputeMs(full));
}

// A mixture of experts keeps every expert in memory and reads, per step,
// the shared weights and the experts its tokens pick: one token reads its
// active parameters, a large batch all of them; it computes by its active
// parameters.
TEST(SliceModelTest, AMixtureReadsTheExpertsItsTokensPick) {
  const LlmModel& moe = *ShippedLlmModels().Find("qwen3-30b-a3b").value();
  EXPECT_DOUBLE_EQ(moe.WeightBytes(), 61e9);
  EXPECT_NEAR(moe.WeightBytesRead(1), 3.3e9 * 2, 1e3);
  EXPECT_NEAR(moe.WeightBytesRead(1000), 61e9, 1e6);
  EXPECT_LT(moe.WeightBytesRead(8), moe.WeightBytesRead(64));
  EXPECT_DOUBLE_EQ(moe.FlopsPerToken(), 6.6e9);
  const mig::GpuModel& h200 =
      *mig::GpuCatalog::Default().Find("H200-141GB").value();
  const mig::Profile& g3 = h200.profiles[h200.FindProfile("3g.71gb")];
  auto s = SliceOf(moe, h200, g3).value();
  const double ms_per_byte = 1e3 / (4800e9 / 2 * 0.8);
  EXPECT_NEAR(s.WeightReadMs(1), 6.6e9 * ms_per_byte, 1e-6);
  EXPECT_NEAR(s.WeightReadMs(100000), 61e9 * ms_per_byte, 1e-3);
  EXPECT_NEAR(s.ms_per_token, 6.6e9 / (989e12 * 60 / 132 * 0.5) * 1e3, 1e-12);
  // It does not fit a 1g.18gb: 61 GB of weights.
  const mig::Profile& g1 = h200.profiles[h200.FindProfile("1g.18gb")];
  EXPECT_FALSE(SliceOf(moe, h200, g1).ok());
}

// The KV cache keeps the activations' dtype unless the table says fp8: an
// FP8 model's cache is BF16's size by default (as vLLM's "auto").
TEST(LlmModelTest, TheKvCacheKeepsTheActivationsDtype) {
  const LlmModel& fp8 = *ShippedLlmModels().Find("llama-3.1-8b-fp8").value();
  EXPECT_EQ(fp8.KvDtype(), "bf16");
  EXPECT_DOUBLE_EQ(fp8.KvBytesPerToken(), 128 * 1024);
  LlmModel kv8 = fp8;
  kv8.kv_dtype = "fp8";
  EXPECT_DOUBLE_EQ(kv8.KvBytesPerToken(), 64 * 1024);
  auto t = ParseLlmModels(
      "models:\n"
      "  - {name: a, parameters_b: 1, layers: 2, kv_heads: 2, head_dim: 64, "
      "kv_dtype: int8}\n"
      "  - {name: b, parameters_b: 2, active_parameters_b: 1, experts: 4, "
      "experts_per_token: 8, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(
      t.status().message(),
      "m.yaml:2: models[0].kv_dtype: must be bf16, fp16 or fp8, got int8");
  t = ParseLlmModels(
      "models:\n"
      "  - {name: b, parameters_b: 2, active_parameters_b: 1, experts: 4, "
      "experts_per_token: 8, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:2: models[0].experts_per_token: must be from 1 to experts "
            "(4) for a mixture of experts, absent for a dense model, got 8");
}

// A mixture's numbers agree with its expert split (issue 93: active
// parameters the experts could not explain multiplied credits 4-fold),
// and a checkpoint whose experts are stored otherwise than the rest is
// priced as stored: gpt-oss-20b's MXFP4 experts and BF16 rest are some
// 12.8 GB (the checkpoint's 13 GB), not 20.9B x 4.25 bits (11.1 GB).
TEST(LlmModelTest, AMixturesTableAgreesWithItsExpertSplit) {
  auto t = ParseLlmModels(
      "models:\n"
      "  - {name: m, parameters_b: 30, active_parameters_b: 1, experts: 128, "
      "experts_per_token: 8, layers: 2, kv_heads: 2, head_dim: 64}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:2: models[0].active_parameters_b: 1 is less than the "
            "experts alone give a token, experts_per_token / experts x "
            "parameters_b = 8 / 128 x 30 = 1.88: the shared weights would be "
            "negative");
  t = ParseLlmModels(
      "models:\n"
      "  - {name: d, parameters_b: 3, layers: 2, kv_heads: 2, head_dim: 64, "
      "expert_dtype: mxfp4}\n",
      "m.yaml");
  EXPECT_EQ(t.status().message(),
            "m.yaml:2: models[0].expert_dtype: only a mixture of experts has "
            "it");
  const LlmModel& oss = *ShippedLlmModels().Find("gpt-oss-20b").value();
  // One expert: (20.9 - 3.6) / (32 - 4) = 0.618B; 32 of them 19.77B at
  // 4.25 bits, the other 1.13B at 2 bytes.
  const double expert = (20.9 - 3.6) / 28;
  EXPECT_NEAR(oss.ExpertParametersB(), expert, 1e-12);
  EXPECT_NEAR(oss.WeightBytes(),
              ((20.9 - 32 * expert) * 2 + 32 * expert * 4.25 / 8) * 1e9, 1);
  EXPECT_NEAR(oss.WeightBytes() / 1e9, 12.76, 0.01);
  // A step that reads one token's experts reads the shared weights and 4
  // experts.
  EXPECT_NEAR(oss.WeightBytesRead(1),
              ((20.9 - 32 * expert) * 2 + 4 * expert * 4.25 / 8) * 1e9, 1);
  // Every shipped mixture agrees with its split.
  for (const LlmModel& m : ShippedLlmModels().models()) {
    if (m.experts == 0) continue;
    EXPECT_GE(m.active_parameters_b * m.experts,
              m.experts_per_token * m.parameters_b)
        << m.name;
  }
}

// An FP8 model's prefill runs at FP8's tensor rate on an H100 (twice
// BF16's), at BF16's on an A100 (no FP8 tensor cores); its weights are
// half as many bytes on both.
TEST(SliceModelTest, AnFp8ModelPrefillsAtTheGpusFp8Rate) {
  const LlmModel& fp8 = *ShippedLlmModels().Find("llama-3.1-8b-fp8").value();
  auto h100_bf16 = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  auto h100_fp8 = SliceOf(fp8, H100(), Profile("3g.40gb")).value();
  EXPECT_NEAR(h100_fp8.ms_per_token, h100_bf16.ms_per_token * 989 / 1979,
              1e-12);
  EXPECT_NEAR(h100_fp8.shared_read_ms, h100_bf16.shared_read_ms / 2, 1e-9);
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Profile& a100_3g = a100.profiles[a100.FindProfile("3g.40gb")];
  EXPECT_DOUBLE_EQ(SliceOf(fp8, a100, a100_3g).value().ms_per_token,
                   SliceOf(Llama8b(), a100, a100_3g).value().ms_per_token);
}

// Requests that never meet (one every 100 s): each sees its closed form,
// the first token after the steps that prefill its prompt in chunks of the
// step's budget (2,048 on a 3g.40gb), each later one after a step over its
// context.
TEST(BatcherSimulationTest, ALoneRequestTakesItsStepsClosedForm) {
  SliceCapacity slice = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  ASSERT_EQ(slice.max_batched_tokens, 2048);
  LlmTerms terms{2000, 100, 5000, 64, 0, 0};
  BatcherStats s = SimulateBatcher(slice, terms, {}, {0.01, 200, 7});
  double ttft = 0, decode = 0;
  for (long o = 0; o < 5000; o += 2048) {
    long c = std::min(2048L, 5000 - o);
    ttft += slice.StepMs({0, o, c, c * (o + (c + 1) / 2.0)});
  }
  for (int k = 1; k < 64; ++k) {  // over the prompt and k tokens made
    decode += slice.StepMs({1, 5000 + k, 0, 5000.0 + k});
  }
  EXPECT_NEAR(s.ttft_p50_ms, ttft, 1e-6);
  EXPECT_NEAR(s.tpot_p50_ms, decode / 63, 1e-6);
  EXPECT_NEAR(s.latency_p50_ms, ttft + decode, 1e-6);
  EXPECT_EQ(s.counted, 180);
  // Without chunked prefill the whole prompt is one step.
  EngineOptions whole;
  whole.max_batched_tokens = -1;
  SliceCapacity unchunked =
      SliceOf(Llama8b(), H100(), Profile("3g.40gb"), whole).value();
  EXPECT_EQ(unchunked.max_batched_tokens, 0);
  BatcherStats w = SimulateBatcher(unchunked, terms, {}, {0.01, 200, 7});
  EXPECT_NEAR(w.ttft_p50_ms,
              unchunked.StepMs({0, 0, 5000, 5000 * (5001 / 2.0)}), 1e-6);
}

// A prompt's tokens found in the prefix cache are read, not computed: a
// lone request prefills the rest over them as context, in closed form; and
// the service's credit on the slice grows.
// The batcher step by step: a request joins only while the KV room holds
// the whole of it, so the second of two 600-token requests in a room of
// 1,000 waits until the first has its output; each step gives a running
// request one token, its first with its prompt's last chunk.
TEST(ContinuousBatcherTest, ARequestWaitsForTheRoomOfItsWholeSequence) {
  SliceCapacity slice = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  slice.kv_tokens = 1000;
  ContinuousBatcher batcher(slice);
  EXPECT_FALSE(batcher.Fits({900, 101}));
  size_t a = batcher.Add({500, 100});
  size_t b = batcher.Add({500, 100});
  int steps = 0;
  while (!batcher.Done(a)) {
    ContinuousBatcher::Step step = batcher.Next();
    EXPECT_EQ(step.tokens, std::vector<size_t>{a});
    EXPECT_EQ(step.reserved, 600);
    EXPECT_GT(step.ms, 0);
    ++steps;
  }
  EXPECT_EQ(steps, 100);  // one prefill step, then 99 decodes
  EXPECT_EQ(batcher.Made(b), 0);
  ContinuousBatcher::Step step = batcher.Next();
  EXPECT_EQ(step.tokens, std::vector<size_t>{b});
  EXPECT_EQ(batcher.Made(b), 1);
}

// The proxy's balancing for LLM services: a burst of 400 requests, none
// done before the last arrives, goes to replicas of credits 1 and 3 in the
// ratio of their credits, at one balancer or two (each then balancing its
// half).
TEST(BalancedBatchersTest, RequestsInFlightFollowTheCredits) {
  const SliceCapacity slice =
      SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  const LlmTerms terms{2000, 100, 256, 64};
  queueing::Traffic traffic;
  traffic.service_rate = 1e6;
  for (int balancers : {1, 2}) {
    BatcherSamples s = RunBalancedBatchers({{slice, 1}, {slice, 3}}, balancers,
                                           Balancing::kLeastOutstanding, terms,
                                           traffic, {1e6, 400, 1});
    EXPECT_EQ(s.dispatched, (std::vector<long>{100, 300})) << balancers;
  }
}

// The prefix cache's hits as the balancing delivers them (issue 89:
// least_conn spread a conversation's turns over the pool, and the credits
// counted hits it could not deliver). Alone, a replica finds the
// workload's share; with affinity, three replicas find it too; balanced
// by requests in flight, a conversation's next turn meets its replica
// about one time in three: h x (1/T + (T - 1)/T x 1/3), T turns, the first
// counted as held.
TEST(BalancedBatchersTest, AffinityDeliversThePrefixCacheHitRate) {
  const SliceCapacity slice =
      SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  LlmTerms terms{2000, 100, 2000, 64, 0.5, 0.5};
  terms.prefix_cache_hit_rate = 0.75;
  queueing::Traffic traffic;
  traffic.service_rate = 6;
  const BatcherRun run{6, 6000, 3};
  const double h = 0.75;
  BatcherSamples alone = RunBalancedBatchers(
      {{slice, 1}}, 1, Balancing::kLeastOutstanding, terms, traffic, run);
  EXPECT_NEAR(alone.prefix_cache_hit_rate, h, 0.005);
  const std::vector<BalancedReplica> three = {
      {slice, 1}, {slice, 1}, {slice, 1}};
  BatcherSamples affine =
      RunBalancedBatchers(three, 2, Balancing::kAffinity, terms, traffic, run);
  EXPECT_NEAR(affine.prefix_cache_hit_rate, h, 0.005);
  BatcherSamples spread = RunBalancedBatchers(
      three, 2, Balancing::kLeastOutstanding, terms, traffic, run);
  const double t = kConversationTurns;
  EXPECT_NEAR(spread.prefix_cache_hit_rate, h * (1 / t + (t - 1) / t / 3),
              0.05);
  // The cache's hits are prefill not computed: the first token sooner.
  EXPECT_LT(queueing::Quantile(&affine.ttft_ms, 0.99),
            queueing::Quantile(&spread.ttft_ms, 0.99));
}

// Affinity's bound: a replica with its batch in flight passes the
// conversation on (at that balancer), so a replica of a batch of 2 under
// a load that keeps more in flight loses hits, and its requests queue no
// deeper than the batch.
TEST(BalancedBatchersTest, AFullReplicaPassesItsConversationsOn) {
  SliceCapacity slice = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  slice.max_batch = 2;
  LlmTerms terms{2000, 100, 2000, 64, 0.5, 0.5};
  terms.prefix_cache_hit_rate = 0.75;
  queueing::Traffic traffic;
  traffic.service_rate = 4;
  BatcherSamples s =
      RunBalancedBatchers({{slice, 1}, {slice, 1}}, 1, Balancing::kAffinity,
                          terms, traffic, {4, 2000, 3});
  EXPECT_LT(s.prefix_cache_hit_rate, 0.7);
  EXPECT_GT(s.prefix_cache_hit_rate, 0.3);
}

TEST(BatcherSimulationTest, PrefixCacheHitsAreReadNotComputed) {
  SliceCapacity slice = SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  LlmTerms terms{2000, 100, 4000, 64, 0, 0};
  terms.prefix_cache_hit_rate = 0.75;  // 3,000 cached, 1,000 computed
  BatcherStats s = SimulateBatcher(slice, terms, {}, {0.01, 200, 7});
  EXPECT_NEAR(s.ttft_p50_ms,
              slice.StepMs({0, 3000, 1000, PrefillPairs(3000, 1000)}), 1e-6);
  double decode = 0;
  for (int k = 1; k < 64; ++k) {
    decode += slice.StepMs({1, 4000 + k, 0, 4000.0 + k});
  }
  EXPECT_NEAR(s.tpot_p50_ms, decode / 63, 1e-6);
  // A whole prompt in the cache still computes its last token.
  terms.prefix_cache_hit_rate = 0.99;
  terms.prompt_tokens = 100;
  s = SimulateBatcher(slice, terms, {}, {0.01, 200, 7});
  EXPECT_NEAR(s.ttft_p50_ms, slice.StepMs({0, 99, 1, PrefillPairs(99, 1)}),
              1e-6);
  if (testing::kAddressSanitizer) return;  // a credit search takes seconds
  LlmTerms cold{2000, 100, 4000, 128, 0.5, 0.5};
  LlmTerms warm = cold;
  warm.prefix_cache_hit_rate = 0.75;
  queueing::Traffic traffic;
  double without =
      CreditOf(Llama8b(), H100(), Profile("3g.40gb"), cold, traffic).rate;
  double with =
      CreditOf(Llama8b(), H100(), Profile("3g.40gb"), warm, traffic).rate;
  EXPECT_GT(without, 0);
  EXPECT_GT(with, 2 * without) << without << " -> " << with;
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

// The lengths' quantiles against closed forms: a cv of 1 is an
// exponential (p99 = mean ln 100), a cv of 1/sqrt(2) a gamma of shape 2
// (P(2, x) = 1 - e^-x (1 + x)), a cv of 0 the mean itself; the gamma's own
// sampler agrees with a cv of 2 (shape 1/4, where no rule of thumb holds).
TEST(RequestLengthsTest, QuantilesOfTheGammaLengths) {
  EXPECT_NEAR(LengthQuantile(1000, 1, 0.99), 1000 * std::log(100.0), 1e-6);
  EXPECT_NEAR(LengthQuantile(1000, 1, 0.5), 1000 * std::log(2.0), 1e-6);
  const double x = LengthQuantile(2, std::sqrt(0.5), 0.99);  // scale 1
  EXPECT_NEAR(1 - std::exp(-x) * (1 + x), 0.99, 1e-12);
  EXPECT_EQ(LengthQuantile(700, 0, 0.99), 700);
  EXPECT_EQ(LengthQuantile(0.2, 0, 0.99), 1);
  std::mt19937_64 rng(7);
  std::gamma_distribution<double> gamma(0.25, 4 * 512);
  std::vector<double> draws(200000);
  for (double& d : draws) d = gamma(rng);
  std::nth_element(draws.begin(), draws.begin() + 198000, draws.end());
  EXPECT_NEAR(LengthQuantile(512, 2, 0.99) / draws[198000], 1, 0.02);
}

// The longest sequence a replica takes: the service's own max_model_len,
// else its p99 prompt plus p99 output, at most the model's context.
TEST(RequestLengthsTest, MaxModelLenIsTheP99RequestUnlessTheServiceSetsIt) {
  LlmTerms terms{2000, 100, 1000, 200, 1, 0};
  EXPECT_EQ(MaxModelLen(terms, Llama8b()),
            static_cast<long>(std::ceil(1000 * std::log(100.0) + 200)));
  terms.prompt_tokens = 100000;
  EXPECT_EQ(MaxModelLen(terms, Llama8b()), Llama8b().max_context);
  terms.max_model_len = 8192;
  EXPECT_EQ(MaxModelLen(terms, Llama8b()), 8192);
}

// A slice whose KV cache cannot hold one sequence of max_model_len gets no
// credit, with the reason (vLLM would not start the replica: it was
// credited and crash-looped); nor does a max_model_len past the model's
// context.
TEST(LlmCreditTest, NoCreditWhereTheKvRoomCannotHoldMaxModelLen) {
  LlmTerms terms{2000, 100, 1024, 256, 0.5, 0.5};
  const long kv =
      SliceOf(Llama8b(), H100(), Profile("2g.20gb")).value().kv_tokens;
  terms.max_model_len = static_cast<double>(kv + 1);
  LlmCredit c = CreditOf(Llama8b(), H100(), Profile("2g.20gb"), terms, {});
  EXPECT_EQ(c.rate, 0);
  EXPECT_EQ(c.why, fmt::format("2g.20gb holds {} KV tokens, fewer than one "
                               "sequence of max_model_len {} (vLLM starts no "
                               "such replica)",
                               kv, kv + 1));
  terms.max_model_len = static_cast<double>(kv);
  EXPECT_GT(CreditOf(Llama8b(), H100(), Profile("2g.20gb"), terms, {}).rate, 0);
  terms.max_model_len = Llama8b().max_context + 1;
  EXPECT_EQ(CreditOf(Llama8b(), H100(), Profile("7g.80gb"), terms, {}).why,
            fmt::format("max_model_len {} is past llama-3.1-8b's context of {} "
                        "tokens",
                        Llama8b().max_context + 1, Llama8b().max_context));
}

// No credit exceeds what the slice could complete at its peaks (the bound
// every command holds a deployment's LLM replicas to: a full batch of 256
// at a roofline step at the peaks, the KV room not counted, so loose where
// the room holds few sequences: 52 req/s on 2g.20gb against a credit of
// 0.09).
TEST(LlmCreditTest, NoCreditPassesThePeakRequestRate) {
  LlmTerms terms{2000, 100, 1024, 256, 0.5, 0.5};
  std::vector<const char*> slices = {"2g.20gb", "7g.80gb"};
  if (testing::kAddressSanitizer) slices.resize(1);
  for (const char* p : slices) {
    LlmCredit c = CreditOf(Llama8b(), H100(), Profile(p), terms, {});
    double peak = PeakRequestRate(Llama8b(), H100(), Profile(p), 256, 256);
    EXPECT_GT(c.rate, 0) << p;
    EXPECT_LT(c.rate, peak) << p;
  }
  EXPECT_EQ(PeakRequestRate(Llama8b(), H100(), Profile("1g.10gb"), 256, 256),
            0);  // the weights do not fit
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

// No figure beyond physics: for every shipped model on every profile of
// every GPU the table gives figures for, at short and long prompts and
// outputs, a replica kept full reads no faster than the slice's peak
// bandwidth and computes no faster than its peak tensor rate (the step is
// a roofline at efficiencies below 1).
TEST(SliceModelTest, NoFigureExceedsTheSlicesPeak) {
  int checked = 0;
  for (const mig::GpuModel* table : mig::GpuCatalog::Default().models()) {
    const mig::GpuModel& gpu = *table;
    if (gpu.memory_bandwidth_gbs <= 0) continue;
    for (const mig::Profile& profile : gpu.profiles) {
      for (const LlmModel& model : ShippedLlmModels().models()) {
        StatusOr<SliceCapacity> slice = SliceOf(model, gpu, profile);
        if (!slice.ok()) continue;
        const SlicePeaks peaks = PeaksOf(model, gpu, profile);
        for (auto [prompt, output] :
             {std::pair{128.0, 1024.0}, std::pair{1024.0, 256.0},
              std::pair{4096.0, 128.0}, std::pair{32.0, 2048.0}}) {
          Saturation s = SaturationOf(*slice, prompt, output);
          if (s.sequences == 0) continue;
          const double n = s.sequences;
          const double tokens = n + n * prompt / output;
          const double context = n * (prompt + output / 2);
          const double bytes =
              model.WeightBytesRead(tokens) + model.KvBytesPerToken() * context;
          const double flops =
              model.FlopsPerToken() * tokens +
              model.AttentionFlopsPerContextToken() *
                  (context + n / output * prompt * (prompt + 1) / 2);
          const double step_s = s.step_ms / 1e3;
          const std::string what =
              fmt::format("{} on {} {} at {}/{}", model.name, gpu.name,
                          profile.name, prompt, output);
          EXPECT_LE(bytes / step_s, peaks.bandwidth_gbs * 1e9 * 1.001) << what;
          EXPECT_LE(flops / step_s, peaks.tflops * 1e12 * 1.001) << what;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// The credit cache's key is the whole question: changing any one field of
// the slice, the terms or the traffic changes it (and FieldCount pins the
// fields listed here to the structs', as CreditKey's own assertions do).
TEST(LlmCreditTest, EveryFieldOfTheQuestionChangesTheKey) {
  const SliceCapacity slice =
      SliceOf(Llama8b(), H100(), Profile("3g.40gb")).value();
  const LlmTerms terms{2000, 100, 1024, 256, 0.5, 0.5, 30000};
  const queueing::Traffic traffic{40, 1.5, queueing::RouterKind{}, 2};
  const std::string key = CreditKey(slice, terms, traffic);
  int changed = 0;
  auto expect_changes = [&](const char* field, auto change) {
    SliceCapacity s = slice;
    LlmTerms t = terms;
    queueing::Traffic r = traffic;
    change(s, t, r);
    EXPECT_NE(CreditKey(s, t, r), key) << field;
    ++changed;
  };
#define MIGSERVE_FIELD(object, field)                                          \
  expect_changes(#object "." #field, [](SliceCapacity& slice, LlmTerms& terms, \
                                        queueing::Traffic& traffic) {          \
    (void)slice, (void)terms, (void)traffic;                                   \
    object.field = object.field + 1;                                           \
  })
  MIGSERVE_FIELD(slice, kv_tokens);
  MIGSERVE_FIELD(slice, max_batch);
  MIGSERVE_FIELD(slice, max_batched_tokens);
  MIGSERVE_FIELD(slice, shared_read_ms);
  MIGSERVE_FIELD(slice, expert_read_ms);
  MIGSERVE_FIELD(slice, experts);
  MIGSERVE_FIELD(slice, experts_per_token);
  MIGSERVE_FIELD(slice, kv_read_ms_per_token);
  MIGSERVE_FIELD(slice, ms_per_token);
  MIGSERVE_FIELD(slice, ms_per_attention_pair);
  MIGSERVE_FIELD(slice, step_overhead_ms);
  MIGSERVE_FIELD(terms, ttft_ms);
  MIGSERVE_FIELD(terms, tpot_ms);
  MIGSERVE_FIELD(terms, prompt_tokens);
  MIGSERVE_FIELD(terms, output_tokens);
  MIGSERVE_FIELD(terms, prompt_cv);
  MIGSERVE_FIELD(terms, output_cv);
  MIGSERVE_FIELD(terms, latency_ms);
  MIGSERVE_FIELD(terms, prefix_cache_hit_rate);
  MIGSERVE_FIELD(terms, max_model_len);
  MIGSERVE_FIELD(traffic, service_rate);
  MIGSERVE_FIELD(traffic, cv);
  MIGSERVE_FIELD(traffic, router_replicas);
#undef MIGSERVE_FIELD
  expect_changes("traffic.router",
                 [](SliceCapacity&, LlmTerms&, queueing::Traffic& r) {
                   r.router = *queueing::ParseRouter("random");
                 });
  // SliceCapacity's 11 fields, LlmTerms' 9, Traffic's 4.
  EXPECT_EQ(changed, FieldCount<SliceCapacity>() + FieldCount<LlmTerms>() +
                         FieldCount<queueing::Traffic>());
}

}  // namespace
}  // namespace migserve::llm
