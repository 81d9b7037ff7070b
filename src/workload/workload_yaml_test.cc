#include "workload/workload_yaml.h"

#include <gtest/gtest.h>

#include "llm/llm_model.h"
#include "mig/gpu_catalog.h"

namespace migserve::workload {
namespace {

TEST(WorkloadYamlTest, ParsesAndRoundTrips) {
  auto w = ParseWorkload(
      "gpu: A100-SXM4-80GB\nlatency_budget: 0.45\nmax_procs: 2\n"
      "legacy_4g3g: true\nservices:\n"
      "  - {name: r50, model: resnet50, throughput: 2000, latency_ms: 100}\n"
      "  - name: \"bert-2\"\n    model: bert\n    throughput: 12.5\n"
      "    latency_ms: 300\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_DOUBLE_EQ(w->latency_budget, 0.45);
  EXPECT_EQ(w->max_procs, 2);
  EXPECT_TRUE(w->mig.legacy_4g3g);
  ASSERT_EQ(w->services.size(), 2u);
  EXPECT_EQ(w->services[0].line, 6);
  EXPECT_EQ(w->services[1].line, 7);
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->services[1].name, "bert-2");
  EXPECT_DOUBLE_EQ(back->services[1].throughput.value(), 12.5);
  EXPECT_TRUE(back->mig.legacy_4g3g);
  // p99 is the default and goes unwritten; paper is written and read back.
  EXPECT_EQ(w->capacity_model, queueing::CapacityModel::kP99);
  EXPECT_EQ(FormatWorkload(*w).find("capacity_model"), std::string::npos);
  w->capacity_model = queueing::CapacityModel::kPaper;
  back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->capacity_model, queueing::CapacityModel::kPaper);
}

TEST(WorkloadYamlTest, ParsesAMixedFleetAndRoundTrips) {
  auto w = ParseWorkload(
      "gpus:\n  - {name: A100-SXM4-80GB, cost: 2.5}\n  - {name: L4-24GB, cost: "
      "0.8}\nservices:\n"
      "  - {name: r50, model: resnet50, throughput: 2000, latency_ms: 100}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->gpu, "A100-SXM4-80GB");
  ASSERT_EQ(w->offers.size(), 2u);
  EXPECT_EQ(w->offers[1], (GpuOffer{"L4-24GB", 0.8}));
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->offers, w->offers);
  auto plain = ParseWorkload(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: r50, model: resnet50, throughput: 2000, latency_ms: 100}\n",
      "w.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->offers, (std::vector<GpuOffer>{{"A100-SXM4-80GB", 1}}));
}

struct BadCase {
  const char* yaml;
  const char* message;
};

// Test names show the expected message, not the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* out) { *out << c.message; }

class WorkloadYamlErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(WorkloadYamlErrorTest, NamesFileLineAndField) {
  auto w = ParseWorkload(GetParam().yaml, "w.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(w.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, WorkloadYamlErrorTest,
    ::testing::Values(
        BadCase{"gpu: T4\nservices: []\n",
                "w.yaml:1: gpu: unknown GPU 'T4' (known: A100-PCIE-40GB, "
                "A100-PCIE-80GB, A100-SXM4-40GB, A100-SXM4-80GB, A30-24GB, "
                "B200-180GB, GH200-144GB, GH200-96GB, H100-NVL-94GB, "
                "H100-PCIE-80GB, H100-SXM5-80GB, H200-141GB, H200-NVL-141GB, "
                "L4-24GB)"},
        // A manifest is read only as a ServingWorkload's.
        BadCase{"apiVersion: migserve.io/v1alpha1\nkind: ServingTarget\n"
                "metadata: {name: t}\nspec: {}\n",
                "w.yaml:2: kind: migserve.io/v1alpha1 ServingTarget: a "
                "workload is a workload file or a migserve.io/v1alpha1 "
                "ServingWorkload"},
        BadCase{"apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
                "metadata: {name: w}\n",
                "w.yaml:1: spec: a ServingWorkload's spec is the workload"},
        BadCase{"apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
                "metadata: {name: w, generation: -1}\nspec: {}\n",
                "w.yaml:3: metadata.generation: not a whole number of at "
                "least 0"},
        BadCase{"apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
                "metadata: {name: w}\nspec:\n  gpu: A100-SXM4-80GB\n"
                "  services: [{name: a, model: m, throughput: 1}]\n",
                "w.yaml:6: services[0].latency_ms: missing"},
        BadCase{"gpus:\n  - {name: L4-24GB, cost: 0}\nservices: []\n",
                "w.yaml:2: gpus[0].cost: must be from 1e-06 to 1e+09, got 0"},
        BadCase{"gpus:\n  - {name: L4-24GB, cost: .inf}\nservices: []\n",
                "w.yaml:2: gpus[0].cost: expected a finite number, got "
                "'.inf'"},
        BadCase{"gpus:\n  - {name: L4-24GB}\n  - {name: L4-24GB}\n"
                "services: []\n",
                "w.yaml:2: gpus: lists L4-24GB twice"},
        BadCase{"gpu: A100-SXM4-80GB\ngpus:\n  - {name: L4-24GB}\n"
                "services: []\n",
                "w.yaml:1: gpu: must name the first of gpus (or be left out)"},
        BadCase{"gpu: A100-SXM4-80GB\ncapacity_model: p95\nservices: []\n",
                "w.yaml:2: capacity_model: must be p99 or paper, got 'p95'"},
        BadCase{"gpu: A100-SXM4-80GB\nrouter: envoy\nservices: []\n",
                "w.yaml:2: router: must be proxy, gateway-api or random, got "
                "'envoy'"},
        // Names go into nginx.conf and manifests: only plain names pass.
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n  - {name: 'a;b', model: m, "
                "throughput: 1, latency_ms: 1}\n",
                "w.yaml:3: services[0].name: must be 1 to 63 letters, digits, "
                "'-', '_' or '.', starting and ending with a letter or digit, "
                "got 'a;b'"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n  - name: s\n    model: \"m/; "
                "}\\n location / { alias /; \"\n    throughput: 1\n"
                "    latency_ms: 1\n",
                "w.yaml:4: services[0].model: must be 1 to 63 letters, "
                "digits, '-', '_' or '.', starting and ending with a letter or "
                "digit, got 'm/; }\\x0a location / { alias /; '"},
        BadCase{"gpu: A100-SXM4-80GB\nrouter_replicas: 0\nservices: []\n",
                "w.yaml:2: router_replicas: must be from 1 to 64, got 0"},
        BadCase{"gpu: A100-SXM4-80GB\narrival_cv: .nan\nservices: []\n",
                "w.yaml:2: arrival_cv: expected a finite number, got '.nan'"},
        BadCase{"gpu: A100-SXM4-80GB\narrival_cv: 0\nservices: []\n",
                "w.yaml:2: arrival_cv: must be from 0.1 to 10, got 0"},
        BadCase{"gpu: A100-SXM4-80GB\nheadroom: -0.1\nservices: []\n",
                "w.yaml:2: headroom: must be from 0 to 10, got -0.1"},
        BadCase{"gpu: A100-SXM4-80GB\nmax_procs: many\nservices: []\n",
                "w.yaml:2: max_procs: expected an integer, got 'many'"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: -3, latency_ms: 10}\n",
                "w.yaml:3: services[0].throughput: must be from 0.001 to "
                "1e+09, got -3"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: .inf, latency_ms: 10}\n",
                "w.yaml:3: services[0].throughput: expected a finite number, "
                "got '.inf'"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1e-320, latency_ms: 10}\n",
                "w.yaml:3: services[0].throughput: must be from 0.001 to "
                "1e+09, got 1e-320"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1e308, latency_ms: 10}\n",
                "w.yaml:3: services[0].throughput: must be from 0.001 to "
                "1e+09, got 1e+308"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 5, latency_ms: .nan}\n",
                "w.yaml:3: services[0].latency_ms: expected a finite number, "
                "got '.nan'"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, latency_ms: 10}\n",
                "w.yaml:3: services[0].throughput: missing"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1, latency_ms: 10}\n"
                "  - {name: a, model: m, throughput: 2, latency_ms: 10}\n",
                "w.yaml:4: services[1].name: duplicate service 'a' (first at "
                "line 3)"},
        // Names that Kubernetes objects would make one (issue 76: three
        // services were dropped on apply, nginx saw duplicate upstreams).
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a_b, model: m, throughput: 1, latency_ms: 10}\n"
                "  - {name: a-c, model: m, throughput: 1, latency_ms: 10}\n"
                "  - {name: A-B, model: m, throughput: 2, latency_ms: 10}\n",
                "w.yaml:5: services[2].name: services 'a_b' (line 3) and "
                "'A-B' both become 'a-b' in Kubernetes object names; rename "
                "one"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: Search, model: m, throughput: 1, latency_ms: 10}\n"
                "  - {name: search, model: m, throughput: 2, latency_ms: "
                "10}\n",
                "w.yaml:4: services[1].name: services 'Search' (line 3) and "
                "'search' both become 'search' in Kubernetes object names; "
                "rename one"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1, latency: 10}\n",
                "w.yaml:3: services[0].latency: unknown field (expected one "
                "of: name, model, throughput, latency_ms, min_replicas, "
                "observe, kind, ttft_ms, tpot_ms, prompt_tokens, "
                "output_tokens, prompt_cv, output_cv, prefix_cache_hit_rate, "
                "max_model_len)"},
        // Issue 93: vLLM refuses every request past its --max-model-len.
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: llama-3.1-8b, kind: llm, throughput: 1, "
                "ttft_ms: 500, tpot_ms: 50, prompt_tokens: 1000, "
                "output_tokens: 200, max_model_len: 100}\n",
                "w.yaml:3: services[0].max_model_len: 100 is below the p99 "
                "prompt plus the p99 output, 1200 tokens (1000.0 + 200.0): "
                "vLLM would refuse more than one request in a hundred"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1, latency_ms: 10, "
                "observe: {rates: x}}\n",
                "w.yaml:3: services[0].observe.rates: unknown field (expected "
                "one of: rate, p99_ms)"},
        BadCase{"gpu: A100-SXM4-80GB\nservices:\n"
                "  - {name: a, model: m, throughput: 1, latency_ms: 10, "
                "min_replicas: 0}\n",
                "w.yaml:3: services[0].min_replicas: must be from 1 to 10000, "
                "got 0"},
        BadCase{"gpu: A100-SXM4-80GB\nservices: 3\n",
                "w.yaml:2: services: expected a list"},
        BadCase{"gpu: A100-SXM4-80GB\nservices: [\n",
                "w.yaml:3: end of sequence flow not found"}));

// The router and the arrivals' burstiness default to a proxy pair and
// Poisson, and survive a round trip when set.
// A ServingWorkload manifest (kubectl get ... -o yaml, or the one kept in
// git) reads as its spec, and says which resource it is.
TEST(WorkloadYamlTest, AServingWorkloadManifestIsItsSpec) {
  const std::string spec =
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 100, latency_ms: 50}\n";
  std::string indented;
  for (size_t at = 0, next; at < spec.size(); at = next + 1) {
    next = spec.find('\n', at);
    indented += "  " + spec.substr(at, next - at + 1);
  }
  auto w = ParseWorkload(
      "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\nmetadata:\n"
      "  name: w\n  namespace: ns\n  generation: 7\n  uid: u\n"
      "spec:\n" +
          indented + "status: {}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->resource.has_value());
  EXPECT_EQ(w->resource->name, "ns/w");
  EXPECT_EQ(w->resource->generation, 7);
  EXPECT_EQ(FormatWorkload(*w),
            FormatWorkload(ParseWorkload(spec, "s").value()));
  EXPECT_FALSE(ParseWorkload(spec, "s")->resource.has_value());
  // One kept in git: no namespace or generation (the server's).
  auto kept = ParseWorkload(
      "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
      "metadata: {name: w}\nspec:\n" +
          indented,
      "w.yaml");
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->resource->name, "");
  EXPECT_EQ(kept->resource->generation, 0);
}

TEST(WorkloadYamlTest, RouterAndArrivalsRoundTrip) {
  const char* services =
      "services:\n  - {name: a, model: m, throughput: 1, latency_ms: 10}\n";
  auto plain =
      ParseWorkload(std::string("gpu: A100-SXM4-80GB\n") + services, "w.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->router, queueing::RouterKind());
  EXPECT_EQ(plain->router_replicas, 2);
  EXPECT_EQ(plain->arrival_cv, 1);
  EXPECT_EQ(plain->TermsOf(plain->services[0]).traffic.router_replicas, 2);
  auto w =
      ParseWorkload(std::string("gpu: A100-SXM4-80GB\nrouter: gateway-api\n"
                                "router_replicas: 3\narrival_cv: 2\n") +
                        services,
                    "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->router, *queueing::ParseRouter("gateway-api"));
  EXPECT_EQ(back->router_replicas, 3);
  EXPECT_EQ(back->arrival_cv, 2);
  queueing::Traffic t = back->TermsOf(back->services[0]).traffic;
  EXPECT_EQ(t.router, *queueing::ParseRouter("gateway-api"));
  EXPECT_EQ(t.cv, 2);
  EXPECT_EQ(t.service_rate, 1);
}

// headroom (default 0) raises the rate credits must cover, and the rate
// the credits' arrivals assume; it survives a round trip.
TEST(WorkloadYamlTest, HeadroomRaisesTheDemand) {
  const char* services =
      "services:\n  - {name: a, model: m, throughput: 100, latency_ms: 10}\n";
  auto plain =
      ParseWorkload(std::string("gpu: A100-SXM4-80GB\n") + services, "w.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->headroom, 0);
  EXPECT_EQ(plain->Demand(plain->services[0]), 100);
  auto w = ParseWorkload(
      std::string("gpu: A100-SXM4-80GB\nheadroom: 0.25\n") + services,
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->headroom, 0.25);
  EXPECT_EQ(back->services[0].throughput.value(), 100);
  EXPECT_EQ(back->Demand(back->services[0]), 125);
  EXPECT_EQ(back->TermsOf(back->services[0]).traffic.service_rate, 125);
  EXPECT_EQ(back->services[0].min_replicas, 1);
  auto counted = ParseWorkload(
      "gpu: A100-SXM4-80GB\nservices:\n  - {name: a, model: m, throughput: "
      "1, latency_ms: 10, min_replicas: 3}\n",
      "w.yaml");
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  auto again = ParseWorkload(FormatWorkload(*counted), "again.yaml");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->services[0].min_replicas, 3);
}

TEST(WorkloadYamlTest, ObserveQueriesRoundTrip) {
  auto w = ParseWorkload(
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: a, model: m, throughput: 1, latency_ms: 10}\n"
      "  - name: b\n    model: m\n    throughput: 1\n    latency_ms: 10\n"
      "    observe:\n"
      "      rate: 'sum(rate(requests_total{app=\"b\", code=~\"2..\"}[1m]))'\n"
      "      p99_ms: 'histogram_quantile(0.99, sum by (le) (x_bucket)) * "
      "1000'\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->services[0].observe, ObserveQueries{});
  EXPECT_EQ(w->services[1].observe.rate,
            "sum(rate(requests_total{app=\"b\", code=~\"2..\"}[1m]))");
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->services[0].observe, ObserveQueries{});
  EXPECT_EQ(back->services[1].observe, w->services[1].observe);
}

// `kind: llm` (docs/llm.md): token SLOs and lengths, its request latency
// defaulted from them, the model looked up in the shipped LLM table, and
// back through FormatWorkload; mistakes named by line and field.
TEST(WorkloadYamlTest, LlmServicesParseRoundTripAndNameTheirMistakes) {
  const std::string head = "gpu: H100-SXM5-80GB\nservices:\n";
  auto w = ParseWorkload(
      head +
          "  - {name: a, model: m, throughput: 1, latency_ms: 10}\n"
          "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 5, "
          "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, "
          "output_tokens: 256, output_cv: 0.5}\n"
          "  - {name: cached, model: llama-3.1-8b, kind: llm, throughput: 5, "
          "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, "
          "output_tokens: 256, prefix_cache_hit_rate: 0.5}\n",
      "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->services[0].kind, ServiceKind());
  EXPECT_EQ(w->services[1].kind.name(), "llm");
  EXPECT_FALSE(w->services[0].tokens);
  EXPECT_EQ(w->services[1].tokens->prefix_cache_hit_rate, 0);
  EXPECT_EQ(w->services[2].tokens->prefix_cache_hit_rate, 0.5);
  ASSERT_TRUE(w->services[1].tokens);
  EXPECT_EQ(*w->services[1].tokens,
            (llm::LlmTerms{2000, 100, 1024, 256, 0, 0.5, 2000 + 100 * 640}));
  EXPECT_DOUBLE_EQ(w->services[1].latency_ms, 2000 + 100 * 256 * 2.5);
  ASSERT_NE(w->llm_models, nullptr);
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->services[1].tokens, w->services[1].tokens);
  EXPECT_EQ(back->services[2].tokens, w->services[2].tokens);
  // A hit rate of 0 is not written: files without caching read as before.
  EXPECT_EQ(FormatWorkload(*w).find("prefix_cache_hit_rate: 0,"),
            std::string::npos);
  EXPECT_EQ(back->services[1].latency_ms, w->services[1].latency_ms);
  // The LLM engine's settings: a margin and chunked prefill by default,
  // both the workload's to change, and kept through a round trip.
  EXPECT_EQ(w->llm_margin, 0.15);
  const mig::GpuModel& h100 =
      *mig::GpuCatalog::Default().Find("H100-SXM5-80GB").value();
  const llm::LlmModel& llama =
      *llm::ShippedLlmModels().Find("llama-3.1-8b").value();
  EXPECT_EQ(w->LlmCalibration(llama, h100, h100.profiles[4])
                .engine.max_batched_tokens,
            0);  // vLLM's default for the slice
  auto own = ParseWorkload(
      "gpu: H100-SXM5-80GB\nllm_margin: 0.3\nllm_chunked_prefill: false\n"
      "services:\n"
      "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 5, "
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1024, output_tokens: 256}\n",
      "w.yaml");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->LlmCalibration(llama, h100, h100.profiles[4])
                .engine.max_batched_tokens,
            -1);
  auto own_back = ParseWorkload(FormatWorkload(*own), "again.yaml");
  ASSERT_TRUE(own_back.ok()) << own_back.status().ToString();
  EXPECT_EQ(own_back->llm_margin, 0.3);
  EXPECT_FALSE(own_back->llm_chunked_prefill);

  for (const auto& [service, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"{name: c, model: gpt-5, kind: llm, throughput: 5, ttft_ms: 1, "
            "tpot_ms: 1, prompt_tokens: 1, output_tokens: 1}",
            "w.yaml:3: services[0].model: unknown LLM model 'gpt-5'"},
           {"{name: c, model: llama-3.1-8b, kind: llm, throughput: 5, "
            "tpot_ms: 1, prompt_tokens: 1, output_tokens: 1}",
            "w.yaml:3: services[0].ttft_ms: "},
           {"{name: c, model: m, throughput: 5, latency_ms: 9, ttft_ms: 1}",
            "w.yaml:3: services[0].ttft_ms: only a service of kind: llm has "
            "it"},
           {"{name: c, model: m, kind: gan, throughput: 5, latency_ms: 9}",
            "w.yaml:3: services[0].kind: must be dnn (the default)"},
           {"{name: c, model: llama-3.1-8b, kind: llm, throughput: 5, "
            "ttft_ms: 1, tpot_ms: 1, prompt_tokens: 1, output_tokens: 1, "
            "prefix_cache_hit_rate: 1}",
            "w.yaml:3: services[0].prefix_cache_hit_rate: must be from 0 to "
            "0.99"}}) {
    auto bad = ParseWorkload(head + "  - " + service + "\n", "w.yaml");
    EXPECT_EQ(bad.status().message().substr(0, message.size()), message)
        << bad.status().message();
  }
}

TEST(WorkloadYamlTest, SurviveRoundTripsAndNamesItsFields) {
  const char* services =
      "services:\n  - {name: a, model: m, throughput: 100, latency_ms: 10}\n";
  auto plain =
      ParseWorkload(std::string("gpu: A100-SXM4-80GB\n") + services, "w.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->survive);
  EXPECT_EQ(plain->Kept(plain->services[0]), 0);
  auto w = ParseWorkload(std::string("gpu: A100-SXM4-80GB\nsurvive: {domain: "
                                     "node, keep: 0.5}\n") +
                             services,
                         "w.yaml");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto back = ParseWorkload(FormatWorkload(*w), "again.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->survive);
  EXPECT_EQ(back->survive->domain, FailureDomain::kNode);
  EXPECT_EQ(back->survive->keep, 0.5);
  EXPECT_EQ(back->Kept(back->services[0]), 50);
  EXPECT_EQ(back->Demand(back->services[0]), 100);
  struct Bad {
    const char* survive;
    const char* error;
  };
  for (const Bad& bad : {
           Bad{"survive: {domain: rack, keep: 1}",
               "w.yaml:2: survive.domain: must be gpu or node, got 'rack'"},
           Bad{"survive: {domain: gpu}", "survive.keep"},
           Bad{"survive: {domain: gpu, keep: 1.5}", "survive.keep: must be"},
           Bad{"survive: {domain: gpu, keep: 0}", "survive.keep: must be"},
           Bad{"survive: {domain: gpu, keep: 1, spare: 2}", "spare"},
           Bad{"survive: gpu", "survive"},
       }) {
    auto parsed = ParseWorkload(
        std::string("gpu: A100-SXM4-80GB\n") + bad.survive + "\n" + services,
        "w.yaml");
    ASSERT_FALSE(parsed.ok()) << bad.survive;
    EXPECT_NE(parsed.status().message().find(bad.error), std::string::npos)
        << parsed.status().message();
  }
}

TEST(WorkloadYamlTest, MissingFileIsNotFound) {
  auto w = LoadWorkload("/no/such/workload.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace migserve::workload
