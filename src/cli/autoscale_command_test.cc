// `migserve autoscale` in a cluster: the target in the controller's
// ConfigMap, each decision and problem a Kubernetes Event, at the
// stand-in API server.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "kube/kube_client.h"
#include "kube/serving_workload.h"
#include "kube/testing/api_server_standin.h"
#include "kube/yaml_json.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;

// One round for night's services, at a Prometheus address nothing listens
// on, without a metrics port.
std::vector<std::string> NightOnce() {
  return {"autoscale",
          "-w",
          SourcePath("data/workloads/night.yaml"),
          "-p",
          SourcePath("data/profiles/a100-80gb.csv"),
          "--prometheus",
          "http://127.0.0.1:" + std::to_string(testing::FreePort()),
          "--once",
          "--metrics-port",
          "-1"};
}

// A kubeconfig for `server` in namespace serving, token "secret".
std::string Kubeconfig(const kube::ApiServerStandIn& server) {
  return testing::WriteTempFile("autoscale-kubeconfig",
                                server.KubeconfigYaml("serving", "secret"));
}

// The target read from the ConfigMap; Prometheus does not answer (nothing
// listens on its port): the round fails, says so on stderr and as a
// Warning Event about the named object.
TEST(AutoscaleCommandTest, AFailedRoundIsAWarningEventAboutTheNamedObject) {
  kube::ApiServerStandIn server({"", "", "secret", 1});
  ASSERT_TRUE(server.Start().ok());
  std::string kubeconfig = Kubeconfig(server);
  server.Put(
      "/api/v1/namespaces/serving/configmaps/migserve-target",
      {{"apiVersion", "v1"},
       {"kind", "ConfigMap"},
       {"metadata", {{"name", "migserve-target"}, {"namespace", "serving"}}},
       {"data",
        {{"deployment.json",
          ReadFile(SourcePath("data/deployments/night.json")).value()}}}});
  std::vector<std::string> args = NightOnce();
  args.insert(args.end(),
              {"--target-configmap", "migserve-target", "--kubeconfig",
               kubeconfig, "--insecure-loopback-http", "--events-for",
               "Deployment/migserve-autoscale"});
  CliResult r = Cli(args);
  EXPECT_NE(r.code, 0);
  std::vector<nlohmann::json> events =
      server.List("/api/v1/namespaces/serving/events");
  ASSERT_EQ(events.size(), 1u) << r.err;
  EXPECT_EQ(events[0]["type"], "Warning");
  EXPECT_EQ(events[0]["reason"], "RoundFailed");
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "Deployment");
  EXPECT_EQ(events[0]["involvedObject"]["apiVersion"], "apps/v1");
  EXPECT_EQ(events[0]["involvedObject"]["name"], "migserve-autoscale");
  EXPECT_EQ(events[0]["involvedObject"]["namespace"], "serving");
  std::string message = events[0]["message"].get<std::string>();
  EXPECT_FALSE(message.empty());
  EXPECT_NE(r.err.find("autoscale: " + message), std::string::npos) << r.err;
  // The policy's state is kept beside the target; there is none yet.
  EXPECT_NE(r.err.find("autoscale: no policy state (configmap "
                       "serving/migserve-target key autoscale-state.json: "
                       "missing): cool-downs start now, margins at 1"),
            std::string::npos)
      << r.err;
  server.Update("/api/v1/namespaces/serving/configmaps/migserve-target",
                [](nlohmann::json* m) {
                  (*m)["data"]["autoscale-state.json"] =
                      R"({"margins": {"bert-1": 2}})";
                });
  CliResult bad_state = Cli(args);
  EXPECT_NE(bad_state.err.find("key autoscale-state.json: margins.bert-1: 2 "
                               "is not a share in (0, 1])"),
            std::string::npos)
      << bad_state.err;

  std::vector<std::string> no_map = args;
  *std::find(no_map.begin(), no_map.end(), "migserve-target") = "nope";
  CliResult missing = Cli(no_map);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("configmaps/nope"), std::string::npos)
      << missing.err;
  std::vector<std::string> both = args;
  both.insert(both.end(), {"--target", "t.json"});
  EXPECT_NE(
      Cli(both).err.find(
          "--target FILE, --target-resource NAME or --target-configmap NAME"),
      std::string::npos);

  args.back() = "Service/x";
  CliResult bad = Cli(args);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find(
                "--events-for: 'Service/x': expected KIND/NAME, "
                "KIND one of ConfigMap, Deployment, Lease, Pod, ServingTarget"),
            std::string::npos)
      << bad.err;
  // The run with a bad state failed its round too; the bad option's made
  // none.
  EXPECT_EQ(server.List("/api/v1/namespaces/serving/events").size(), 2u);
}

// With an inventory the GPU budget defaults to its GPUs of the workload's
// model; an explicit --max-gpus may lower it, not raise it or lift it.
TEST(AutoscaleCommandTest, TheBudgetDefaultsToTheInventorysGpus) {
  auto inventory = [](const std::string& nodes) {
    return testing::WriteTempFile("autoscale-inventory.yaml",
                                  "nodes:\n" + nodes);
  };
  const std::string fleet = inventory(
      "  - {name: a1, gpu: A100-SXM4-80GB, gpus: 8}\n"
      "  - {name: h1, gpu: H100-SXM5-80GB, gpus: 8}\n"
      "  - {name: a2, gpu: A100-SXM4-80GB, gpus: 4}\n");
  const std::string target = testing::WriteTempFile(
      "autoscale-target.json",
      ReadFile(SourcePath("data/deployments/night.json")).value());
  std::vector<std::string> args = NightOnce();
  args.insert(args.end(),
              {"--target", target, "--dry-run", "--inventory", fleet});
  CliResult r = Cli(args);
  // Nothing answers at Prometheus' address: the round fails, after the
  // budget was set.
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("autoscale: a GPU budget of 12 GPUs, the "
                       "A100-SXM4-80GB GPUs of --inventory " +
                       fleet),
            std::string::npos)
      << r.err;

  std::vector<std::string> lower = args;
  lower.insert(lower.end(), {"--max-gpus", "10"});
  CliResult lowered = Cli(lower);
  EXPECT_EQ(lowered.code, 1) << lowered.err;
  EXPECT_EQ(lowered.err.find("a GPU budget of"), std::string::npos);

  std::vector<std::string> raise = args;
  raise.insert(raise.end(), {"--max-gpus", "13"});
  CliResult raised = Cli(raise);
  EXPECT_EQ(raised.code, 2);
  EXPECT_NE(raised.err.find("--max-gpus: 13 is more than the 12 "
                            "A100-SXM4-80GB GPUs of --inventory " +
                            fleet),
            std::string::npos)
      << raised.err;
  raise.back() = "0";
  EXPECT_NE(Cli(raise).err.find("--max-gpus: no budget is more than the 12"),
            std::string::npos);

  args.back() = inventory("  - {name: h1, gpu: H100-SXM5-80GB, gpus: 8}\n");
  CliResult none = Cli(args);
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("--inventory: " + args.back() +
                          " has no A100-SXM4-80GB GPU (the workload's)"),
            std::string::npos)
      << none.err;
}

// A workload with every field the workload YAML has but the two files
// (llm_models, llm_measurements), as a ServingWorkload's spec.
constexpr char kEveryField[] = R"yaml(gpu: A100-SXM4-80GB
latency_budget: 0.9
capacity_model: p99
router: proxy
router_replicas: 2
arrival_cv: 1.5
headroom: 0.1
survive: {domain: gpu, keep: 0.5}
max_procs: 1
legacy_4g3g: false
optional_profiles: false
llm_margin: 0.2
llm_chunked_prefill: true
services:
  - {name: bert-1, model: bert, kind: dnn, throughput: 1881, latency_ms: 100,
     min_replicas: 2,
     observe: {rate: "vector(1881)", p99_ms: "vector(50)"}}
  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: 2,
     ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 1000, output_tokens: 200,
     prompt_cv: 0.5, output_cv: 0.5, prefix_cache_hit_rate: 0.2,
     max_model_len: 4096, latency_ms: 60000}
)yaml";

// The fields the workload parser knows, as its error for `unknown` at
// `where` (top level or a service) lists them.
std::set<std::string> KnownFields(const std::string& text) {
  auto refused = workload::ParseWorkload(text, "w.yaml");
  EXPECT_FALSE(refused.ok());
  const std::string& m = refused.status().message();
  const std::string lead = "(expected one of: ";
  const size_t at = m.find(lead);
  EXPECT_NE(at, std::string::npos) << m;
  std::set<std::string> known;
  std::stringstream list(
      m.substr(at + lead.size(), m.rfind(')') - at - lead.size()));
  for (std::string key; std::getline(list >> std::ws, key, ',');) {
    known.insert(key);
  }
  return known;
}

// The ServingWorkload's schema (deploy/base/crd.yaml, its second document)
// lists every field the workload parser knows, and nothing else, but the
// files a resource cannot name: a field it lacked would be pruned by the
// API server, silently.
TEST(AutoscaleCommandTest, TheServingWorkloadsSchemaListsEveryWorkloadField) {
  std::vector<YAML::Node> crds =
      YAML::LoadAllFromFile(SourcePath("deploy/base/crd.yaml"));
  ASSERT_EQ(crds.size(), 2u);
  ASSERT_EQ(crds[1]["spec"]["names"]["kind"].as<std::string>(),
            "ServingWorkload");
  YAML::Node spec = crds[1]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
                        ["properties"]["spec"];
  auto listed = [](const YAML::Node& node) {
    std::set<std::string> keys;
    for (const auto& p : node["properties"]) {
      keys.insert(p.first.as<std::string>());
    }
    return keys;
  };
  std::set<std::string> top =
      KnownFields("gpu: A100-SXM4-80GB\nunknown: 1\nservices: []\n");
  top.erase("llm_models");
  top.erase("llm_measurements");
  EXPECT_EQ(listed(spec), top);
  EXPECT_EQ(listed(spec["properties"]["services"]["items"]),
            KnownFields("gpu: A100-SXM4-80GB\nservices:\n  - {name: a, "
                        "model: bert, throughput: 1, latency_ms: 1, "
                        "unknown: 1}\n"));
}

// `autoscale --workload-resource`: the ServingWorkload's spec, stored by
// the API server as its schema (deploy/base/crd.yaml) keeps it, is the
// workload: every field of the format survives the schema (none pruned),
// a spec the parser refuses is named with its field, in the log and in
// the resource's status, a missing resource is named, and -w with it is
// refused.
TEST(AutoscaleCommandTest, TheWorkloadIsAServingWorkloadsSpec) {
  kube::ApiServerStandIn server({"", "", "secret", 1});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.ApplyShipped("deploy/base/crd.yaml").ok());
  kube::KubeClient client(server.ClientConfig("serving", "secret"));
  const nlohmann::json spec = kube::YamlToJson(YAML::Load(kEveryField));
  auto made =
      client.Create(kube::ServingWorkloadsPath("serving"),
                    {{"apiVersion", "migserve.io/v1alpha1"},
                     {"kind", "ServingWorkload"},
                     {"metadata", {{"name", "w"}, {"namespace", "serving"}}},
                     {"spec", spec}});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ((*made)["spec"], spec) << "a field the schema prunes";
  kube::ServingWorkloadText text(&client, "serving", "w");
  auto read = text.Read();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->generation, 1);
  EXPECT_EQ(kube::YamlToJson(YAML::Load(read->yaml)),
            nlohmann::ordered_json(nlohmann::json(spec)));

  std::string kubeconfig = Kubeconfig(server);
  std::vector<std::string> args = NightOnce();
  args.erase(args.begin() + 1, args.begin() + 3);  // no -w
  args.insert(args.end(),
              {"--workload-resource", "w", "--target",
               SourcePath("data/deployments/night.json"), "--dry-run",
               "--kubeconfig", kubeconfig, "--insecure-loopback-http"});
  // It starts on the resource's workload; the round fails at Prometheus
  // (nothing listens there).
  CliResult r = Cli(args);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.find("servingworkload"), std::string::npos) << r.err;
  // Its status says so: generation 1 accepted, the round held by the
  // failure (kubectl get servingworkloads shows both).
  auto status = [&] {
    return client.Get(kube::ServingWorkloadPath("serving", "w"))
        .value()
        .value("status", nlohmann::json());
  };
  nlohmann::json said = status();
  EXPECT_EQ(said["observedGeneration"], 1) << said.dump();
  EXPECT_EQ(said["followedGeneration"], 1) << said.dump();
  EXPECT_EQ(said["services"], 2) << said.dump();
  ASSERT_EQ(said["conditions"].size(), 2u) << said.dump();
  EXPECT_EQ(said["conditions"][0]["type"], "Accepted");
  EXPECT_EQ(said["conditions"][0]["status"], "True");
  EXPECT_EQ(said["conditions"][1]["type"], "Planned");
  EXPECT_EQ(said["conditions"][1]["status"], "False");
  EXPECT_EQ(said["conditions"][1]["reason"], "RoundFailed");

  // A spec its schema lets through and the parser refuses: the second
  // service named as the first.
  nlohmann::json services = spec["services"];
  services[1]["name"] = "bert-1";
  ASSERT_TRUE(client
                  .Patch(kube::ServingWorkloadPath("serving", "w"),
                         {{"spec", {{"services", services}}}})
                  .ok());
  CliResult bad = Cli(args);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("servingworkload serving/w:"), std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("services[1].name: duplicate service 'bert-1'"),
            std::string::npos)
      << bad.err;
  // Refused at the start: its status names the field, nothing followed.
  said = status();
  EXPECT_EQ(said["observedGeneration"], 2) << said.dump();
  EXPECT_FALSE(said.contains("followedGeneration")) << said.dump();
  ASSERT_EQ(said["conditions"].size(), 1u) << said.dump();
  EXPECT_EQ(said["conditions"][0]["status"], "False");
  EXPECT_EQ(said["conditions"][0]["reason"], "WorkloadInvalid");
  EXPECT_NE(said["conditions"][0]["message"].get<std::string>().find(
                "services[1].name"),
            std::string::npos)
      << said.dump();

  std::vector<std::string> other = args;
  *std::find(other.begin(), other.end(), "w") = "nope";
  CliResult missing = Cli(other);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("servingworkloads/nope"), std::string::npos)
      << missing.err;

  std::vector<std::string> both = args;
  both.insert(both.end(), {"-w", SourcePath("data/workloads/night.yaml")});
  EXPECT_NE(Cli(both).err.find("give the workload: -w FILE or "
                               "--workload-resource NAME (one of them)"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve::cli
