#include "deployment/deployment_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tuple>

namespace migserve::deployment {
namespace {

constexpr const char* kExample = R"({"gpu": "A100-SXM4-80GB",
 "services": [{"name": "r", "model": "resnet50", "throughput": 2000, "latency_ms": 100}],
 "gpus": [{"id": 0, "node": "node-0",
           "instances": [{"profile": "3g.40gb", "start": 4, "service": "r",
                          "batch": 16, "procs": 1, "throughput": 1188.2, "latency_ms": 13.0},
                         {"profile": "4g.40gb", "start": 0, "service": null}]}],
 "summary": {"algorithm": "milp", "gpus": 17, "status": "optimal",
             "lower_bound": 16, "seconds": 0.2, "nodes": 12}}
)";

TEST(DeploymentJsonTest, ReadsDesignExampleAndRoundTrips) {
  auto d = ParseDeployment(kExample, "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->gpus.size(), 1u);
  EXPECT_EQ(d->gpus[0].node, "node-0");
  ASSERT_EQ(d->gpus[0].instances.size(), 2u);
  EXPECT_EQ(d->gpus[0].instances[0].service, "r");
  EXPECT_EQ(d->gpus[0].instances[0].batch, 16);
  EXPECT_FALSE(d->gpus[0].instances[1].service.has_value());
  EXPECT_EQ(d->summary->lower_bound, 16);
  EXPECT_EQ(d->summary->extra["nodes"], 12);
  EXPECT_EQ(d->UsedGpus(), 1);
  std::string text = FormatDeployment(*d);
  auto back = ParseDeployment(text, "again.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FormatDeployment(*back), text);
  EXPECT_NE(text.find("\"service\": null"), std::string::npos);
}

// min_replicas travels with the deployment (export gives such services a
// disruption budget); 1, the default, is not written.
TEST(DeploymentJsonTest, MinReplicasIsKeptAndChecked) {
  nlohmann::json j = nlohmann::json::parse(kExample);
  j["services"][0]["min_replicas"] = 3;
  auto d = ParseDeployment(j.dump(), "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->services[0].min_replicas, 3);
  EXPECT_EQ(nlohmann::json::parse(
                FormatDeployment(*d))["services"][0]["min_replicas"],
            3);
  d->services[0].min_replicas = 1;
  EXPECT_FALSE(
      nlohmann::json::parse(FormatDeployment(*d))["services"][0].contains(
          "min_replicas"));
  j["services"][0]["min_replicas"] = 0;
  auto bad = ParseDeployment(j.dump(), "d.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("services[0].min_replicas"),
            std::string::npos)
      << bad.status().message();
}

// An LLM service's kind and token terms are written and read back, so
// every reader of the deployment alone knows its credits are modelled.
TEST(DeploymentJsonTest, AnLlmServiceKeepsItsKindAndTokenTerms) {
  nlohmann::json j = nlohmann::json::parse(kExample);
  auto d = ParseDeployment(j.dump(), "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->services[0].tokens.has_value());
  d->services[0].kind = *workload::ParseServiceKind("llm");
  d->services[0].tokens = llm::LlmTerms{2000, 100, 1024, 256, 0.5, 0, 0};
  d->services[0].tokens->latency_ms = d->services[0].latency_ms;
  nlohmann::json written = nlohmann::json::parse(FormatDeployment(*d));
  EXPECT_EQ(written["services"][0]["kind"], "llm");
  EXPECT_EQ(written["services"][0]["tpot_ms"], 100);
  auto back = ParseDeployment(written.dump(), "d.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->services[0].tokens.has_value());
  EXPECT_EQ(*back->services[0].tokens, *d->services[0].tokens);
  // A prefix cache hit rate is written where it is above 0.
  EXPECT_FALSE(written["services"][0].contains("prefix_cache_hit_rate"));
  d->services[0].tokens->prefix_cache_hit_rate = 0.4;
  auto cached =
      ParseDeployment(FormatDeployment(*d), "d.json").value().services[0];
  EXPECT_EQ(cached.tokens->prefix_cache_hit_rate, 0.4);
  // A max_model_len vLLM would refuse the longest requests at is refused
  // (issue 93: validate and export took 100 where a request had
  // thousands of tokens).
  nlohmann::json short_len = written;
  short_len["services"][0]["max_model_len"] = 100;
  auto refused = ParseDeployment(short_len.dump(), "d.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "services[0].max_model_len: 100 is below the p99 prompt plus "
                "the p99 output, 2828 tokens"),
            std::string::npos)
      << refused.status().message();
  written["services"][0].erase("tpot_ms");
  auto missing = ParseDeployment(written.dump(), "d.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("services[0].tpot_ms: missing"),
            std::string::npos)
      << missing.status().message();
  written["services"][0]["kind"] = "rag";
  EXPECT_NE(ParseDeployment(written.dump(), "d.json")
                .status()
                .message()
                .find("services[0].kind: must be dnn (the default) or llm"),
            std::string::npos);
}

TEST(DeploymentJsonTest, TheSummaryIsTyped) {
  nlohmann::json j = nlohmann::json::parse(kExample);
  j["summary"]["status"] = "time_limit";
  j["summary"].update({{"pod_starts", 4},
                       {"repartitioned_gpus", 2},
                       {"kept_replicas", 9},
                       {"starts_bound", 3.0},
                       {"extra_gpus", 1},
                       {"transition_nodes", 40},
                       {"plain_optimum",
                        {{"gpus", 17},
                         {"pod_starts", 8},
                         {"repartitioned_gpus", 5},
                         {"kept_replicas", 6}}},
                       {"plain_placed", false}});
  auto d = ParseDeployment(j.dump(), "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const Summary& s = *d->summary;
  EXPECT_EQ(s.status, SolveStatus::kTimeLimit);
  ASSERT_TRUE(s.transition.has_value());
  EXPECT_EQ(s.transition->cost.pod_starts, 4);
  EXPECT_EQ(s.transition->cost.gpus, 17);
  EXPECT_EQ(s.transition->plain_optimum.repartitioned_gpus, 5);
  EXPECT_EQ(s.transition->nodes, 40);
  // The transition's keys are typed, not the algorithm's extra.
  EXPECT_FALSE(s.extra.contains("pod_starts"));
  EXPECT_EQ(s.extra["nodes"], 12);
  EXPECT_EQ(nlohmann::json::parse(FormatDeployment(*d)), j);

  j["summary"]["status"] = "done";
  auto bad = ParseDeployment(j.dump(), "d.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "d.json: summary.status: unknown status 'done'");
}

TEST(DeploymentJsonTest, SyntaxErrorNamesLineAndColumn) {
  auto d = ParseDeployment("{\"gpu\": \"x\",\n \"gpus\": [}\n", "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message().rfind("d.json:2:", 0), 0u)
      << d.status().message();
}

TEST(DeploymentJsonTest, ANumberTooLargeIsAnErrorNotACrash) {
  // Found by fuzz/deployment_json_fuzz.cc (corpus: number-overflow.json).
  auto d = ParseDeployment(
      "{\"gpu\": \"A100-SXM4-80GB\", \"gpus\": [], "
      "\"services\": [{\"throughput\": 3.8e871}]}",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "d.json: invalid JSON: number overflow parsing '3.8e871'");
}

TEST(DeploymentJsonTest, FieldErrorNamesPath) {
  auto d = ParseDeployment(
      R"({"gpu": "A", "gpus": [{"id": 0, "instances": [{"profile": "1g.10gb", "start": "zero"}]}]})",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "d.json: gpus[0].instances[0].start: expected an integer, got "
            "\"zero\"");
  auto missing = ParseDeployment(R"({"gpu": "A"})", "d.json");
  EXPECT_EQ(missing.status().message(), "d.json: gpus: missing");
}

// A service's name goes into manifests and the proxy's configuration:
// only plain names pass (boundary/plain_name.h).
TEST(DeploymentJsonTest, ANameThatIsNotPlainIsRefused) {
  auto d = ParseDeployment(
      R"({"gpu": "A", "gpus": [{"id": 0, "instances": [{"profile": "1g.10gb", "start": 0, "service": "s\"; x"}]}]})",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "d.json: gpus[0].instances[0].service: must be 1 to 63 letters, "
            "digits, '-', '_' or '.', starting and ending with a letter or "
            "digit, got 's\"; x'");
  d = ParseDeployment(
      R"({"gpu": "A", "services": [{"name": "s", "model": "m}"}], "gpus": []})",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("d.json: services[0].model: must be"),
            std::string::npos)
      << d.status().message();
}

// Two services whose Kubernetes objects would share a name (issue 76).
TEST(DeploymentJsonTest, NamesThatBecomeOneObjectNameAreRefused) {
  auto d = ParseDeployment(
      R"({"gpu": "A", "services": [{"name": "a.b", "model": "m"}, )"
      R"({"name": "a_b", "model": "m"}], "gpus": []})",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "d.json: services[1].name: services 'a.b' and 'a_b' both become "
            "'a-b' in Kubernetes object names; rename one");
}

TEST(DeploymentJsonTest, SurviveIsKeptAndChecked) {
  nlohmann::json j = nlohmann::json::parse(kExample);
  j["survive"] = {{"domain", "node"}, {"keep", 0.5}};
  auto d = ParseDeployment(j.dump(), "d.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->survive);
  EXPECT_EQ(d->survive->domain, workload::FailureDomain::kNode);
  EXPECT_EQ(d->survive->keep, 0.5);
  auto back = ParseDeployment(FormatDeployment(*d), "again.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->survive, d->survive);
  EXPECT_FALSE(ParseDeployment(kExample, "d.json")->survive);
  for (auto [field, value, message] :
       {std::tuple{"domain", nlohmann::json("rack"),
                   "d.json: survive.domain: must be gpu or node, got 'rack'"},
        std::tuple{"keep", nlohmann::json(0),
                   "d.json: survive.keep: must be in (0, 1], got 0"},
        std::tuple{"keep", nlohmann::json("all"),
                   "d.json: survive.keep: expected a number, got \"all\""}}) {
    nlohmann::json bad = j;
    bad["survive"][field] = value;
    EXPECT_EQ(ParseDeployment(bad.dump(), "d.json").status().message(),
              message);
  }
}

// An instance serving a service the deployment does not list is refused:
// export would otherwise write a pod with no rate or SLO behind it.
TEST(DeploymentJsonTest, AReplicaOfAnUnlistedServiceIsRefused) {
  auto d = ParseDeployment(
      R"({"gpu": "A100-SXM4-80GB", "services": [{"name": "a", "model": "m",
          "throughput": 1, "latency_ms": 10}],
          "gpus": [{"id": 0, "instances": [{"profile": "7g.80gb", "start": 0,
          "service": "b", "batch": 1, "procs": 1, "throughput": 5,
          "latency_ms": 3}]}]})",
      "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "d.json: gpu 0: instance 7g.80gb@0: serves 'b', which is not in "
            "its services");
}

}  // namespace
}  // namespace migserve::deployment
