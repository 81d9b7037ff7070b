#include "workload/capacity_matrix.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "util/interrupt.h"
#include "util/test_util.h"
#include "workload/relaxed_bound.h"
#include "workload/workload_yaml.h"

namespace migserve::workload {
namespace {

constexpr const char* kProfiles =
    "model,gpu,profile,batch,procs,throughput,latency_ms\n"
    "m,A100-SXM4-80GB,1g.10gb,1,1,100,10\n"
    "m,A100-SXM4-80GB,1g.10gb,8,1,200,50\n"
    "m,A100-SXM4-80GB,2g.20gb,8,1,300,30\n"
    "m,A100-SXM4-80GB,7g.80gb,8,1,1000,12\n"
    "m,A100-SXM4-80GB,7g.80gb,8,2,1500,20\n";

class CapacityMatrixTest : public ::testing::Test {
 protected:
  StatusOr<CapacityMatrix> Build(const std::string& yaml) {
    auto w = ParseWorkload(yaml, "w.yaml");
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    workload_ = *w;
    return CapacityMatrix::Build(workload_, profiles_, gpu_);
  }
  profile::ProfileTable profiles_ =
      profile::ParseProfileCsv(kProfiles, "p.csv").value();
  const mig::GpuModel& gpu_ =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  Workload workload_;
};

// The credit phase says how far it is (issue 77: a new user waited in
// silence): "credits: K of N services on GPU, about S s left", K growing,
// never the last service (the phase is over then).
TEST_F(CapacityMatrixTest, TheCreditsSayHowFarTheyAre) {
  std::string yaml = "gpu: A100-SXM4-80GB\nservices:\n";
  for (int i = 0; i < 12; ++i) {
    yaml += "  - {name: s" + std::to_string(i) +
            ", model: m, throughput: " + std::to_string(100 + 7 * i) +
            ", latency_ms: 200}\n";
  }
  workload_ = ParseWorkload(yaml, "w.yaml").value();
  std::vector<std::string> said;
  std::mutex mu;
  auto m = CapacityMatrix::Build(
      workload_, profiles_, gpu_, true,
      [&](const std::string& line) {
        std::lock_guard lock(mu);
        said.push_back(line);
      },
      1e-9);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_FALSE(said.empty());
  int last = 0;
  for (const std::string& line : said) {
    int k = 0, n = 0;
    ASSERT_EQ(
        std::sscanf(line.c_str(), "credits: %d of %d services on", &k, &n), 2)
        << line;
    EXPECT_EQ(n, 12);
    EXPECT_GT(k, last);
    EXPECT_LT(k, 12);
    EXPECT_NE(line.find(" services on A100-SXM4-80GB, about "),
              std::string::npos)
        << line;
    EXPECT_NE(line.find(" s left"), std::string::npos) << line;
    last = k;
  }
  // Without a sink, or before its interval, nothing is said.
  said.clear();
  ASSERT_TRUE(CapacityMatrix::Build(
                  workload_, profiles_, gpu_, true,
                  [&](const std::string& line) { said.push_back(line); }, 60)
                  .ok());
  EXPECT_TRUE(said.empty());
}

// An LLM service beside today's (docs/llm.md): its cells are the token
// simulation's credits, none on a slice that cannot hold its weights.
TEST_F(CapacityMatrixTest, LlmServicesAreCreditedPerSliceFromTheirModel) {
  if (testing::kAddressSanitizer) {
    // Four credit searches, 30 s under ASan: llm_test's run there.
    GTEST_SKIP() << "the optimized build checks it";
  }
  auto m = Build(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 100, latency_ms: 200}\n"
      "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 5, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, "
      "output_tokens: 256}\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  int g1 = gpu_.FindProfile("1g.10gb"), g3 = gpu_.FindProfile("3g.40gb"),
      g7 = gpu_.FindProfile("7g.80gb");
  EXPECT_EQ(m->throughput(1, g1), 0);  // 16 GB of weights in 10 GB: no
  EXPECT_EQ(m->row(1, g1), nullptr);
  EXPECT_GT(m->throughput(1, g3), 0);
  EXPECT_GT(m->throughput(1, g7), m->throughput(1, g3));
  ASSERT_NE(m->row(1, g7), nullptr);
  EXPECT_EQ(m->row(1, g7)->model, "llama-3.1-8b");
  // The row's throughput is what the replica completes kept full, never
  // the credit, which keeps the token SLOs below it.
  EXPECT_GT(m->row(1, g7)->throughput, 1.1 * m->throughput(1, g7));
  EXPECT_GT(m->throughput(0, g1), 0);  // today's service as before
}

// An LLM replica's credit does not depend on how many replicas share its
// service (issue 93: a 7g was credited 1.134 to 1.715 req/s by its pool,
// the smoother arrivals of a rotation credited to a proxy that routes
// least-connections): the same slice for the same SLOs at a service rate
// one replica carries and at one ten need, behind the proxy.
TEST_F(CapacityMatrixTest, AnLlmCreditIsTheSameInAPoolOfAnySize) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "two credit searches; the optimized build checks it";
  }
  auto w = ParseWorkload(
      "gpu: A100-SXM4-80GB\nrouter: proxy\nservices:\n"
      "  - {name: one, model: llama-3.1-8b, kind: llm, throughput: 1, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, "
      "output_tokens: 256}\n"
      "  - {name: many, model: llama-3.1-8b, kind: llm, throughput: 40, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, "
      "output_tokens: 256}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const mig::Profile& g7 = gpu_.profiles[gpu_.FindProfile("7g.80gb")];
  const double alone = w->LlmCreditOf(w->services[0], gpu_, g7).rate;
  const double pooled = w->LlmCreditOf(w->services[1], gpu_, g7).rate;
  ASSERT_GT(alone, 0);
  // One replica could carry "one" alone; "many" needs several.
  EXPECT_GT(alone, 1);
  EXPECT_LT(4 * alone, 40);
  EXPECT_EQ(pooled, alone);
}

// Where an LLM service fits no slice, the error says why for each.
TEST_F(CapacityMatrixTest, AnLlmServiceThatFitsNoSliceSaysWhyForEach) {
  auto tight = Build(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 5, "
      "ttft_ms: 1, tpot_ms: 100, prompt_tokens: 1024, output_tokens: 256}\n");
  ASSERT_FALSE(tight.ok());
  EXPECT_NE(tight.status().message().find(
                "w.yaml:3: services[0]: service 'chat' fits no profile of "
                "A100-SXM4-80GB: 1g.10gb: llama-3.1-8b (16.1 GB of bf16 "
                "weights) does not fit 1g.10gb"),
            std::string::npos)
      << tight.status().message();
  EXPECT_NE(tight.status().message().find(
                "7g.80gb: even an idle replica misses the SLOs"),
            std::string::npos)
      << tight.status().message();
}

// A signal stops the credit searches (minutes at fleet scale): the build
// ends with Aborted, naming the workload, instead of finishing them.
TEST_F(CapacityMatrixTest, ASignalStopsTheSearches) {
  Workload w =
      ParseWorkload(
          "gpu: A100-SXM4-80GB\nservices:\n"
          "  - {name: a, model: m, throughput: 100, latency_ms: 100}\n",
          "w.yaml")
          .value();
  RequestInterrupt();
  auto caps = CapacityMatrix::Build(w, profiles_, gpu_);
  ClearInterrupt();
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().code(), Status::Code::kAborted);
  EXPECT_EQ(caps.status().message(),
            "interrupted while computing the credits of w.yaml's 1 services");
}

TEST_F(CapacityMatrixTest, BestRowPerProfileUnderBudget) {
  auto caps = Build(
      "gpu: A100-SXM4-80GB\nlatency_budget: 0.5\ncapacity_model: paper\n"
      "services:\n"
      "  - {name: a, model: m, throughput: 1000, latency_ms: 80}\n");
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  int g1 = gpu_.FindProfile("1g.10gb"), g2 = gpu_.FindProfile("2g.20gb");
  int g4 = gpu_.FindProfile("4g.40gb"), g7 = gpu_.FindProfile("7g.80gb");
  EXPECT_DOUBLE_EQ(caps->throughput(0, g1), 100);  // 50 ms > 0.5 x 80
  EXPECT_DOUBLE_EQ(caps->throughput(0, g2), 300);
  EXPECT_DOUBLE_EQ(caps->throughput(0, g4), 0);
  EXPECT_DOUBLE_EQ(caps->throughput(0, g7), 1000);  // max_procs 1
  EXPECT_DOUBLE_EQ(caps->utility(0, g2), 0.3);
  // Relaxed bound: best per slice is 1g (100/slice > 300/2 > 1000/7? no:
  // 2g gives 150 per slice) -> 1000 / 150 slices / 7 per GPU.
  EXPECT_NEAR(RelaxedBound(*caps, gpu_), 1000.0 / 150 / 7, 1e-12);
  EXPECT_EQ(CeilGpus(RelaxedBound(*caps, gpu_)), 1);
  EXPECT_NEAR(RelaxedBound(*caps, gpu_, {0.5}), 500.0 / 150 / 7, 1e-12);
}

// The default model credits each row with the rate at which its p99 stays
// within the SLO, split from the service's stream: less than the measured
// throughput, and the same credit the validator gives.
TEST_F(CapacityMatrixTest, P99CreditsTheQuantileCapacityOfTheBestRow) {
  auto caps = Build(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 1000, latency_ms: 80}\n");
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  for (const char* name : {"1g.10gb", "2g.20gb", "7g.80gb"}) {
    int p = gpu_.FindProfile(name);
    const profile::ProfileRow* row = caps->row(0, p);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_GT(caps->throughput(0, p), 0.5 * row->throughput) << name;
    EXPECT_LT(caps->throughput(0, p), row->throughput) << name;
    EXPECT_DOUBLE_EQ(
        caps->throughput(0, p),
        queueing::RowCapacity(profiles_, *row,
                              workload_.TermsOf(workload_.services[0])));
  }
}

TEST_F(CapacityMatrixTest, P99SaysWhenNoRowKeepsTheQuantile) {
  // A lone request takes 1000 x 1 / 50 = 20 ms by the throughput measured,
  // over the SLO of 15 ms, though the latency column says 10.
  profiles_ = profile::ParseProfileCsv(
                  "model,gpu,profile,batch,procs,throughput,latency_ms\n"
                  "m,A100-SXM4-80GB,1g.10gb,1,1,50,10\n",
                  "p.csv")
                  .value();
  auto caps = Build(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 10, latency_ms: 15}\n");
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().message(),
            "w.yaml:3: services[0].latency_ms: service 'a' fits no profile: "
            "no measured point of 'm' keeps its p99 latency within the SLO of "
            "15 ms under random arrivals (capacity_model: p99; its lowest "
            "measured latency is 10 ms)");
}

TEST_F(CapacityMatrixTest, UnknownModelNamesServiceLine) {
  auto caps = Build(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 10, latency_ms: 80}\n"
      "  - {name: b, model: gpt, throughput: 10, latency_ms: 80}\n");
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().message(),
            "w.yaml:4: services[1].model: model 'gpt' has no rows for "
            "A100-SXM4-80GB in p.csv; it has rows for: m");
}

TEST_F(CapacityMatrixTest, UnservableServiceSaysBestLatency) {
  auto caps = Build(
      "gpu: A100-SXM4-80GB\nlatency_budget: 0.5\nservices:\n"
      "  - {name: a, model: m, throughput: 10, latency_ms: 15}\n");
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().message(),
            "w.yaml:4: services[0].latency_ms: service 'a' fits no profile: "
            "its best reachable latency is 10 ms, over the limit of 7.5 ms "
            "(latency_budget 0.5 x SLO 15 ms)");
}

TEST(CeilGpusTest, ForgivesRoundingNoise) {
  EXPECT_EQ(CeilGpus(150.0000000001), 150);
  EXPECT_EQ(CeilGpus(150.01), 151);
  EXPECT_EQ(CeilGpus(0.2), 1);
}

TEST(CeilGpusTest, SaturatesInsteadOfWrapping) {
  EXPECT_EQ(CeilGpus(1e15), std::numeric_limits<int>::max());
  EXPECT_EQ(CeilGpus(1e300), std::numeric_limits<int>::max());
}

}  // namespace
}  // namespace migserve::workload
