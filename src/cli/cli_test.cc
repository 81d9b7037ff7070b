#include "cli/cli.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cli/command.h"
#include "deployment/deployment_json.h"
#include "kube/yaml_json.h"
#include "mig/gpu_catalog.h"
#include "optimizer/registry.h"
#include "profile/testing/shipped.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::kA100Profiles;
using testing::SourcePath;
using testing::WriteTempFile;

std::string Workload(const std::string& name, const std::string& services) {
  return WriteTempFile(name, "gpu: A100-SXM4-80GB\nservices:\n" + services);
}

constexpr const char* kOneService =
    "  - {name: r, model: resnet50, throughput: 3000, latency_ms: 100}\n";

TEST(CliTest, HelpOnEveryCommandExitsZero) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--help"},
                                        {"gpus", "--help"},
                                        {"optimize", "--help"},
                                        {"compare", "--help"},
                                        {"validate", "--help"},
                                        {"import", "parvagpu", "--help"},
                                        {"import", "perf-analyzer", "--help"},
                                        {"import", "model-analyzer", "--help"},
                                        {"import", "migperf", "--help"},
                                        {"generate", "--help"},
                                        {"models", "--help"},
                                        {"llm-slices", "--help"},
                                        {"import", "vllm-bench", "--help"},
                                        {"import", "aiperf", "--help"},
                                        {"plan", "--help"},
                                        {"simulate", "--help"},
                                        {"export", "--help"},
                                        {"place", "--help"},
                                        {"observe", "--help"},
                                        {"controller", "--help"},
                                        {"agent", "--help"},
                                        {"serve", "--help"},
                                        {"report", "--help"},
                                        {"show", "--help"},
                                        {"replay", "--help"}}) {
    CliResult r = Cli(args);
    EXPECT_EQ(r.code, 0) << args[0];
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args[0];
  }
}

// What bash completes with the script `completion bash` prints, after
// `words` (the last being the word under the cursor).
std::string Completed(const std::string& script,
                      const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& w : words) array += " '" + w + "'";
  std::string command = fmt::format(
      "bash -c 'source {}; COMP_WORDS=({}); COMP_CWORD={}; _migserve; echo "
      "\"${{COMPREPLY[*]}}\"'",
      script, std::regex_replace(array, std::regex("'"), "'\\''"),
      words.size() - 1);
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (pipe != nullptr && fgets(buffer, sizeof buffer, pipe) != nullptr) {
    out += buffer;
  }
  if (pipe != nullptr) pclose(pipe);
  return out.substr(0, out.find('\n'));
}

// The completion script knows every command, each command's flags and the
// import kinds, and offers file names for the rest.
TEST(CliTest, BashCompletesCommandsFlagsAndImportKinds) {
  CliResult r = Cli({"completion", "bash"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string script = WriteTempFile("migserve.bash", r.out);
  EXPECT_EQ(Completed(script, {"migserve", "opt"}), "optimize");
  EXPECT_EQ(Completed(script, {"migserve", "re"}), "replay report");
  EXPECT_EQ(Completed(script, {"migserve", "optimize", "--alg"}), "--algo");
  EXPECT_EQ(Completed(script, {"migserve", "replay", "--max-"}), "--max-gpus");
  EXPECT_EQ(Completed(script, {"migserve", "import", "m"}),
            "model-analyzer migperf");
  EXPECT_EQ(Completed(script, {"migserve", "import", "migperf", "-"}),
            "-h --help -o --output");
  EXPECT_EQ(Completed(script, {"migserve", "validate",
                               script.substr(0, script.size() - 3)}),
            script);
  EXPECT_EQ(Cli({"completion", "zsh"}).code, 2);
  EXPECT_EQ(Cli({"completion", "--help"}).code, 0);
}

// A one-service replay: the table's rows, a move up when the rate doubles
// (short while it runs: the jump is beyond any headroom), and a bad trace
// named by file, line and column with exit 2.
TEST(CliTest, ReplayReportsTheRunsAndNamesABadTraceRow) {
  std::string w = Workload("replay.yaml", kOneService);
  std::string trace = WriteTempFile(
      "replay.csv", "time_s,service,rate\n0,r,3000\n600,r,6000\n1800,r,6000\n");
  CliResult r = Cli({"replay", "--trace", trace, "-w", w, "-p", kA100Profiles,
                     "--oracle-interval", "600"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* row : {"policy", "static peak", "oracle"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << r.out;
  }
  // 3,000 x 1.05 up to the next power of 1.05 (1.05^166), then up when
  // the rate doubles at 0:10.
  EXPECT_NE(r.err.find("replay: 0:00 starts on 2 GPUs"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("replay: 0:10 up: r (3291.73 -> "), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("r short for "), std::string::npos) << r.out;
  std::string bad =
      WriteTempFile("bad.csv", "time_s,service,rate\n0,r,3000\n600,r,lots\n");
  r = Cli({"replay", "--trace", bad, "-w", w, "-p", kA100Profiles});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + ":3: rate: "), std::string::npos) << r.err;
}

TEST(CliTest, ExportWritesBothFilesAndRefusesBadInput) {
  std::string dir = testing::TempDir() + "/export";
  std::string night = SourcePath("data/deployments/night.json");
  CliResult r = Cli({"export", "-d", night, "--flavor", "dra", "-o", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(ReadFile(dir + "/mig-parted.yaml").value().find("version: v1"),
            std::string::npos);
  EXPECT_NE(ReadFile(dir + "/replicas.yaml").value().find("ResourceClaim"),
            std::string::npos);
  // Without a serving spec, into deploy/'s namespace for the replicas.
  EXPECT_NE(ReadFile(dir + "/replicas.yaml")
                .value()
                .find("  namespace: migserve-replicas\n"),
            std::string::npos);
  EXPECT_NE(r.err.find("without --resource-slices the claims pin the profile"),
            std::string::npos)
      << r.err;
  std::string slices =
      SourcePath("src/kubernetes/testdata/night-dra/resource-slices.json");
  r = Cli({"export", "-d", night, "--flavor", "dra", "--resource-slices",
           slices, "-o", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(
      ReadFile(dir + "/replicas.yaml")
          .value()
          .find("parentUUID == 'GPU-4b1e0c7d-2f3a-4c5b-8d6e-000000000005'"),
      std::string::npos);
  EXPECT_NE(
      ReadFile(dir + "/dra-apply.sh")
          .value()
          .find("step 0 bert-1-node-0-g0-1g-10gb-0 gpu-0-mig-1g10gb-19-0"),
      std::string::npos);
  EXPECT_NE(ReadFile(dir + "/device-classes.yaml")
                .value()
                .find("extendedResourceName: nvidia.com/mig-1g.10gb\n"),
            std::string::npos);
  EXPECT_NE(r.err.find("wrote " + dir + "/device-classes.yaml"),
            std::string::npos)
      << r.err;
  r = Cli({"export", "-d", night, "--resource-slices", slices, "-o", dir});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--resource-slices: only the dra flavour"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Cli({"export", "-d", night, "--flavor", "x", "-o", dir}).code, 2);
  CliResult missing = Cli({"export", "-d", "/nonexistent.json", "-o", dir});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.json"), std::string::npos);
  // An override for a service the deployment does not have may be a typo,
  // never dropped in silence: said with the services it has. It is no
  // error, since one spec may serve several deployments (issue 90: the
  // Triton example, which tunes bert-1, refused every deployment without
  // it).
  std::string spec = WriteTempFile(
      "typo-serving.yaml", "services:\n  bert1:\n    labels: {team: nlp}\n");
  CliResult typo =
      Cli({"export", "-d", night, "--serving", spec, "-o", dir + "-typo"});
  EXPECT_EQ(typo.code, 0) << typo.err;
  EXPECT_NE(typo.err.find("export: " + spec +
                          ":2: services.bert1: no service bert1 in " + night +
                          " (it has: bert-1,"),
            std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find("): its overrides apply to no replica here\n"),
            std::string::npos)
      << typo.err;
  // With the profiles, a replica that declares 1.5x what its row measured
  // (it would draw 1.5x its share of the traffic) is refused; its batch and
  // batch time alone would allow it.
  EXPECT_EQ(Cli({"export", "-d", night, "-p", kA100Profiles, "-o", dir}).code,
            0);
  nlohmann::json inflated = nlohmann::json::parse(ReadFile(night).value());
  nlohmann::json& first = inflated["gpus"][0]["instances"][0];
  first["throughput"] = first["throughput"].get<double>() * 1.5;
  std::string lying = WriteTempFile("inflated.json", inflated.dump());
  CliResult refused =
      Cli({"export", "-d", lying, "-p", kA100Profiles, "-o", dir + "-lying"});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(
      refused.err.find("req/s for '" + first["service"].get<std::string>() +
                       "', more than the "),
      std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "-lying"));
}

TEST(CliTest, MixedFleetOptimizesCostAndValidates) {
  // resnet50 and bert from the real A100 profiles, and an L4 (no MIG) that
  // serves resnet50 well and cheaply.
  std::string profiles =
      WriteTempFile("fleet.csv", ReadFile(kA100Profiles).value() +
                                     "resnet50,L4-24GB,whole,8,1,900,9,\nbert,"
                                     "L4-24GB,whole,8,1,40,90,\n");
  std::string w = WriteTempFile(
      "fleet.yaml",
      "gpus:\n  - {name: A100-SXM4-80GB, cost: 3}\n  - {name: L4-24GB, cost: "
      "1}\n"
      "capacity_model: paper\n"
      "services:\n"
      "  - {name: r, model: resnet50, throughput: 3000, latency_ms: 100}\n"
      "  - {name: b, model: bert, throughput: 300, latency_ms: 200}\n");
  std::string d = testing::TempDir() + "/fleet.json";
  CliResult r =
      Cli({"optimize", "-w", w, "-p", profiles, "--algo", "milp", "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("cost"), std::string::npos) << r.err;
  auto json = nlohmann::json::parse(ReadFile(d).value());
  EXPECT_EQ(json["summary"]["status"], "optimal");
  EXPECT_GT(json["summary"]["gpus_by_type"]["L4-24GB"].get<int>(), 0);
  EXPECT_EQ(json["gpus"][0].count("gpu"), 1u);
  CliResult v = Cli({"validate", "-w", w, "-p", profiles, "-d", d});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  CliResult greedy =
      Cli({"optimize", "-w", w, "-p", profiles, "--algo", "greedy"});
  // A usage error, not a "no": exit 2, naming the flag.
  EXPECT_EQ(greedy.code, 2);
  EXPECT_NE(greedy.err.find("--algo greedy: " + w +
                            " offers 2 GPU types; "
                            "only --algo milp"),
            std::string::npos)
      << greedy.err;
  CliResult compare = Cli({"compare", "-w", w, "-p", profiles});
  EXPECT_EQ(compare.code, 2);
  EXPECT_NE(compare.err.find("compare runs one-type algorithms"),
            std::string::npos)
      << compare.err;
}

// The intent as people keep it, a ServingWorkload (issue 90): optimize
// reads its manifest as the workload, and the deployment says which
// resource and generation it was made from, as the autoscaler's targets
// do; the same deployment as from the bare workload otherwise.
TEST(CliTest, OptimizeReadsAServingWorkloadAndSaysWhichItPlanned) {
  std::string day = ReadFile(SourcePath("data/workloads/day.yaml")).value();
  std::string spec;
  std::istringstream lines(day);
  for (std::string line; std::getline(lines, line);) spec += "  " + line + "\n";
  std::string manifest = WriteTempFile(
      "servingworkload.yaml",
      "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
      "metadata:\n  name: migserve-workload\n  namespace: migserve-replicas\n"
      "  generation: 4\nspec:\n" +
          spec);
  std::string from_manifest = testing::TempDir() + "/from-manifest.json";
  std::string from_file = testing::TempDir() + "/from-file.json";
  CliResult r = Cli(
      {"optimize", "-w", manifest, "-p", kA100Profiles, "-o", from_manifest});
  ASSERT_EQ(r.code, 0) << r.err;
  r = Cli({"optimize", "-w", SourcePath("data/workloads/day.yaml"), "-p",
           kA100Profiles, "-o", from_file});
  ASSERT_EQ(r.code, 0) << r.err;
  auto planned = nlohmann::json::parse(ReadFile(from_manifest).value());
  auto plain = nlohmann::json::parse(ReadFile(from_file).value());
  EXPECT_EQ(planned["summary"]["workload"],
            (nlohmann::json{{"name", "migserve-replicas/migserve-workload"},
                            {"generation", 4}}));
  planned["summary"].erase("workload");
  EXPECT_EQ(planned, plain);
  EXPECT_FALSE(plain["summary"].contains("workload"));
}

// Five LLM services of 8B parameters or fewer beside ten of today's
// (data/workloads/mixed-llm.yaml, docs/llm.md): milp places them, no 8B
// model on a 10 GB slice, and serve at 100% of the rates keeps every p99,
// TTFT, TPOT and request latency, within its SLO.
TEST(CliTest, AMixedLlmWorkloadIsPlacedAndServedWithinEverySlo) {
  if (testing::kAddressSanitizer) {
    // Thousands of token-level runs, 7 s optimized; llm_test runs the
    // model and the simulation under ASan.
    GTEST_SKIP() << "the optimized build checks it";
  }
  std::string w = testing::SourcePath("data/workloads/mixed-llm.yaml");
  std::string d = testing::TempDir() + "/mixed-llm.json";
  CliResult r = Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo", "milp",
                     "--time-limit", "20", "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  auto json = nlohmann::json::parse(ReadFile(d).value());
  std::set<std::string> placed;
  for (const auto& gpu : json["gpus"]) {
    for (const auto& i : gpu["instances"]) {
      if (!i.contains("service") || i["service"].is_null()) continue;  // idle
      std::string service = i["service"];
      placed.insert(service);
      if (service == "chat-8b" || service == "assist-8b") {
        EXPECT_NE(i["profile"], "1g.10gb") << service;
      }
    }
  }
  for (const char* llm :
       {"chat-8b", "assist-8b", "code-7b", "summarize-7b", "small-3b"}) {
    EXPECT_EQ(placed.count(llm), 1u) << llm;
  }
  // The deployment says which services are LLMs', so a -p check skips
  // their modelled credits (issue 75: plan -p refused every LLM replica as
  // "not measured").
  CliResult plan = Cli({"plan", "--from", d, "--to", d, "-p", kA100Profiles,
                        "-o", testing::TempDir() + "/mixed-plan.json"});
  EXPECT_EQ(plan.code, 0) << plan.err;
  CliResult serve =
      Cli({"serve", "-d", d, "-w", w, "-p", kA100Profiles, "--format", "json"});
  ASSERT_EQ(serve.code, 0) << serve.err;
  auto served = nlohmann::json::parse(serve.out);
  ASSERT_EQ(served["services"].size(), 15u);
  int llm = 0;
  for (const auto& s : served["services"]) {
    EXPECT_TRUE(s["ok"].get<bool>()) << s.dump();
    EXPECT_LE(s["p99_ms"].get<double>(), s["slo_ms"].get<double>()) << s.dump();
    if (!s.contains("llm")) continue;
    ++llm;
    const auto& t = s["llm"];
    EXPECT_LE(t["ttft_p99_ms"].get<double>(), t["ttft_slo_ms"].get<double>());
    EXPECT_LE(t["tpot_p99_ms"].get<double>(), t["tpot_slo_ms"].get<double>());
    EXPECT_TRUE(t["modelled"].get<bool>());
  }
  EXPECT_EQ(llm, 5);
  // The independent check: every LLM step 10% slower than the model says
  // (the workload's default llm_margin, 0.15, covers it), each LLM service
  // still within its token SLOs.
  CliResult slower = Cli({"serve", "-d", d, "-w", w, "-p", kA100Profiles,
                          "--format", "json", "--llm-step-scale", "1.1"});
  ASSERT_TRUE(slower.code == 0 || slower.code == 1) << slower.err;
  llm = 0;
  const auto slower_served = nlohmann::json::parse(slower.out);
  for (const auto& s : slower_served["services"]) {
    if (!s.contains("llm")) continue;
    ++llm;
    const auto& t = s["llm"];
    EXPECT_LE(t["ttft_p99_ms"].get<double>(), t["ttft_slo_ms"].get<double>())
        << s.dump();
    EXPECT_LE(t["tpot_p99_ms"].get<double>(), t["tpot_slo_ms"].get<double>())
        << s.dump();
  }
  EXPECT_EQ(llm, 5);
}

// A mixture of experts (Qwen3-30B-A3B: 61 GB of weights, 3.3B active
// parameters) is placed on H200 slices, its credit from the active
// parameters' compute and the experts a step reads; llm-slices shows which
// slices hold it and what each gives.
TEST(CliTest, AMixtureOfExpertsIsPlacedOnH200SlicesAndShownPerSlice) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "credit searches: the optimized build runs them";
  }
  std::string w = WriteTempFile(
      "moe.yaml",
      "gpu: H200-141GB\nservices:\n"
      "  - {name: moe, model: qwen3-30b-a3b, kind: llm, throughput: 20, "
      "ttft_ms: 2000, tpot_ms: 50, prompt_tokens: 1024, output_tokens: 256}\n");
  std::string d = testing::TempDir() + "/moe.json";
  CliResult r = Cli(
      {"optimize", "-w", w, "-p", kA100Profiles, "--algo", "milp", "-o", d});
  ASSERT_EQ(r.code, 0) << r.err;
  auto json = nlohmann::json::parse(ReadFile(d).value());
  double credits = 0;
  for (const auto& gpu : json["gpus"]) {
    for (const auto& i : gpu["instances"]) {
      if (!i.contains("service") || i["service"] != "moe") continue;
      credits += i["throughput"].get<double>();
    }
  }
  EXPECT_GE(credits, 20);
  CliResult slices = Cli({"llm-slices", "--model", "qwen3-30b-a3b", "--gpu",
                          "H200-141GB", "--prompt-tokens", "1024",
                          "--output-tokens", "256", "--format", "json"});
  ASSERT_EQ(slices.code, 0) << slices.err;
  std::map<std::string, bool> fits;
  const auto figures = nlohmann::json::parse(slices.out);
  for (const auto& s : figures["slices"]) {
    fits[s["profile"].get<std::string>()] = s["fits"].get<bool>();
    if (s["fits"].get<bool>()) {
      EXPECT_GT(s["output_tokens_per_s"].get<double>(), 0) << s.dump();
    }
  }
  EXPECT_FALSE(fits["2g.35gb"]);  // 61 GB of weights
  // A mixture's step reads the experts its tokens pick: at 31 sequences
  // (a 3g.71gb's KV room beside 61 GB of weights) the reads bound it.
  for (const auto& s : figures["slices"]) {
    if (s["profile"] == "3g.71gb") {
      EXPECT_EQ(s["bound"], "memory");
    }
  }
  EXPECT_TRUE(fits["3g.71gb"]);
  EXPECT_TRUE(fits["7g.141gb"]);
}

// One slice size for all cannot serve an 8B model on 1g.10gb, and says
// why in the model's words, not as a measurement missing.
TEST(CliTest, AnLlmThatFitsNoSmallSliceSaysWhyAll1gCannot) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "credit searches: the optimized build runs them";
  }
  CliResult r = Cli(
      {"optimize", "-w",
       Workload("llm-1g.yaml",
                "  - {name: chat, model: llama-3.1-8b, kind: llm, throughput: "
                "2, ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, "
                "output_tokens: 128}\n"),
       "-p", kA100Profiles, "--algo", "all-1g"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("service 'chat' cannot run on 1g.10gb: llama-3.1-8b "
                       "(16.1 GB of bf16 weights) does not fit 1g.10gb"),
            std::string::npos)
      << r.err;
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Cli({}).code, 2);
  EXPECT_EQ(Cli({"frobnicate"}).code, 2);
  EXPECT_EQ(Cli({"optimize", "-w", "x"}).code, 2);
  CliResult r = Cli({"optimize", "-w", Workload("w.yaml", kOneService), "-p",
                     kA100Profiles, "--algo", "magic"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown algorithm 'magic'"), std::string::npos);
}

// An output never replaces an input of the same command: -o naming the
// workload (or the same file through another path) is refused and the
// workload left as it was; a later command may write over it.
TEST(CliTest, AnOutputIsNeverAnInputOfTheSameCommand) {
  const std::string w = Workload("in-out.yaml", kOneService);
  const std::string before = ReadFile(w).value();
  for (const std::string& out :
       {w,
        std::filesystem::path(w).parent_path().string() + "/./in-out.yaml"}) {
    CliResult r = Cli({"optimize", "-w", w, "-p", kA100Profiles, "-o", out});
    EXPECT_EQ(r.code, 2) << out;
    EXPECT_NE(r.err.find(out + ": is an input of this command; write the "
                               "output to another file"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(ReadFile(w).value(), before);
  }
  const std::string d = testing::TempDir() + "/in-out.json";
  EXPECT_EQ(Cli({"optimize", "-w", w, "-p", kA100Profiles, "-o", d}).code, 0);
  EXPECT_EQ(Cli({"optimize", "-w", w, "-p", kA100Profiles, "-o", d}).code, 0);
}

// Flag values are checked with messages a user reads, the same words in
// --help; an enum flag still takes its value in any case.
TEST(CliTest, BadFlagValuesNameTheRuleAndTheValue) {
  std::string w = SourcePath("data/workloads/night.yaml");
  std::string p = SourcePath("data/profiles/a100-80gb.csv");
  CliResult zero = Cli({"optimize", "-w", w, "-p", p, "--time-limit", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("--time-limit: must be > 0, got 0\n"),
            std::string::npos)
      << zero.err;
  CliResult word = Cli({"optimize", "-w", w, "-p", p, "--time-limit", "x"});
  EXPECT_NE(word.err.find("--time-limit: must be a finite number > 0, got x"),
            std::string::npos)
      << word.err;
  std::string d = SourcePath("data/deployments/night.json");
  std::string out = testing::TempDir() + "/flavor";
  CliResult flavor = Cli({"export", "-d", d, "-o", out, "--flavor", "drb"});
  EXPECT_EQ(flavor.code, 2);
  EXPECT_NE(flavor.err.find("--flavor: must be one of device-plugin, dra, "
                            "gpu-operator, "
                            "got drb"),
            std::string::npos)
      << flavor.err;
  EXPECT_EQ(Cli({"export", "-d", d, "-o", out, "--flavor", "DRA"}).code, 0);
  EXPECT_NE(ReadFile(out + "/replicas.yaml").value().find("ResourceClaim"),
            std::string::npos);
  // A plain choice is exact: the command compares the value as given.
  CliResult upper = Cli({"plan", "--from", d, "--to", d, "--format", "JSON"});
  EXPECT_EQ(upper.code, 2);
  EXPECT_NE(upper.err.find("--format: must be one of json, text, got JSON"),
            std::string::npos)
      << upper.err;
  CliResult help = Cli({"export", "--help"});
  EXPECT_NE(help.out.find("{device-plugin,dra,gpu-operator}=device-plugin"),
            std::string::npos)
      << help.out;
  CliResult port = Cli({"export", "-d", d, "-o", out, "--port", "70000"});
  EXPECT_NE(port.err.find("--port: must be in [1, 65535], got 70000"),
            std::string::npos)
      << port.err;
}

// A file of the wrong kind, or an empty one, is named as such.
TEST(CliTest, WrongKindOfFileOrEmptyFileSaysSo) {
  std::string w = SourcePath("data/workloads/night.yaml");
  std::string d = SourcePath("data/deployments/night.json");
  std::string empty = WriteTempFile("empty.yaml", "\n");
  CliResult yaml = Cli({"validate", "-w", w, "-p", kA100Profiles, "-d", w});
  EXPECT_EQ(yaml.code, 2);
  EXPECT_NE(yaml.err.find(w + ": not JSON (it starts with 'gpu: A100-SX')"),
            std::string::npos)
      << yaml.err;
  CliResult no_json =
      Cli({"validate", "-w", w, "-p", kA100Profiles, "-d", empty});
  EXPECT_NE(no_json.err.find(empty + ": empty file; expected JSON"),
            std::string::npos)
      << no_json.err;
  CliResult no_yaml =
      Cli({"optimize", "-w", empty, "-p", kA100Profiles, "--algo", "greedy"});
  EXPECT_EQ(no_yaml.code, 2);
  EXPECT_NE(no_yaml.err.find(empty + ": empty file; expected a workload"),
            std::string::npos)
      << no_yaml.err;
  CliResult swapped =
      Cli({"optimize", "-w", d, "-p", kA100Profiles, "--algo", "greedy"});
  EXPECT_EQ(swapped.code, 2);
  EXPECT_NE(swapped.err.find(d + ": this is a deployment"), std::string::npos)
      << swapped.err;
}

// A mistyped throughput (1e9) is stopped by the GPU limit before any
// search, instead of a deployment of a million GPUs.
TEST(CliTest, AnAbsurdWorkloadIsStoppedByTheGpuLimit) {
  std::string w = Workload(
      "absurd.yaml",
      "  - {name: a, model: resnet50, throughput: 1e9, latency_ms: 100}\n");
  CliResult r =
      Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo", "greedy"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("greedy: the workload needs at least "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("more than the limit of 100000; check its throughputs, "
                       "or raise the limit (--max-gpus)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  std::string small = Workload(
      "small.yaml",
      "  - {name: a, model: resnet50, throughput: 20000, latency_ms: 100}\n");
  EXPECT_EQ(Cli({"optimize", "-w", small, "-p", kA100Profiles, "--algo",
                 "greedy", "--max-gpus", "2"})
                .code,
            1);
  EXPECT_EQ(
      Cli({"optimize", "-w", small, "-p", kA100Profiles, "--algo", "greedy"})
          .code,
      0);
}

// A search that runs for seconds says how it goes at least every 2 s.
TEST(CliTest, MctsPrintsProgressAtLeastEveryTwoSeconds) {
  CliResult r =
      Cli({"optimize", "-w", SourcePath("data/workloads/normal-1.yaml"), "-p",
           kA100Profiles, "--algo", "mcts", "--mcts-iterations", "100000000",
           "--time-limit", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  int lines = 0;
  for (size_t at = 0; (at = r.err.find("mcts: ", at)) != std::string::npos;
       ++at) {
    ++lines;
  }
  EXPECT_GE(lines, 2) << r.err;
  EXPECT_NE(r.err.find(" iterations, best "), std::string::npos) << r.err;
}

// Tool conventions (issue 19): --version, a typo'd command names the one
// meant, an output path in a missing directory is refused before the
// search (and creates nothing).
TEST(CliTest, VersionTyposAndMissingOutputDirectory) {
  CliResult v = Cli({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("migserve 0.", 0), 0u) << v.out;
  CliResult typo = Cli({"optimise"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("unknown command 'optimise' (did you mean "
                          "'optimize'?)"),
            std::string::npos)
      << typo.err;
  CliResult far = Cli({"frobnicate"});
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
  std::string missing = testing::TempDir() + "/no-such-dir";
  CliResult o = Cli({"optimize", "-w", SourcePath("data/workloads/night.yaml"),
                     "-p", SourcePath("data/profiles/a100-80gb.csv"), "--algo",
                     "greedy", "-o", missing + "/x.json"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("-o: " + missing + "/x.json: no directory " + missing),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("optimize: greedy:"), std::string::npos)
      << "searched before checking the output";
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(CliTest, GpusCountsLayouts) {
  CliResult r = Cli({"gpus", "--gpu", "A30-24GB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("maximal: 5 placed, 4 distinct multisets"),
            std::string::npos)
      << r.out;
  r = Cli({"gpus", "--gpu", "A100-SXM4-40GB", "--legacy-4g3g"});
  EXPECT_NE(r.out.find("maximal: 18 placed, 13 distinct multisets"),
            std::string::npos);
  EXPECT_EQ(Cli({"gpus", "--gpu", "T4"}).code, 2);
}

TEST(CliTest, GpusJsonListsIdsProfilesAndLayoutCounts) {
  CliResult r = Cli({"gpus", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json gpus = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& g : gpus) by_name[g["name"]] = g;
  ASSERT_EQ(by_name.count("H100-SXM5-80GB"), 1u);
  const nlohmann::json& h100 = by_name["H100-SXM5-80GB"];
  EXPECT_EQ(h100["pci_device_ids"], nlohmann::json({"0x2330", "0x2324"}));
  EXPECT_EQ(by_name["H100-PCIE-80GB"]["pci_device_ids"],
            nlohmann::json({"0x2331", "0x2322"}));
  EXPECT_EQ(h100["maximal_layouts"], 19);
  const nlohmann::json& p3g = h100["profiles"][4];
  EXPECT_EQ(p3g["name"], "3g.40gb");
  EXPECT_EQ(p3g["compute_slices"], 3);
  EXPECT_EQ(p3g["memory_slices"], 4);
  EXPECT_EQ(p3g["placements"], nlohmann::json({0, 4}));
  EXPECT_EQ(by_name["A30-24GB"]["maximal_layouts"], 5);
  for (const char* name :
       {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-NVL-94GB", "GH200-96GB",
        "GH200-144GB", "H200-141GB", "B200-180GB"}) {
    EXPECT_EQ(by_name.count(name), 1u) << name;
  }
}

TEST(CliTest, GpuTableAddsAModelWhereverOneIsResolved) {
  std::string table = WriteTempFile(
      "rtx-mig.yaml",
      "name: RTX-TEST-48GB\nproducts:\n"
      "  - {pci_device_id: 0x7FF1, name: \"NVIDIA RTX TEST\"}\n"
      "compute_slices: 4\nmemory_slices: 4\nmemory_gb: 48\nprofiles:\n"
      "  - {name: 1g.12gb, compute_slices: 1, memory_slices: 1, memory_gb: "
      "12, starts: [0, 1, 2, 3]}\n"
      "  - {name: 2g.24gb, compute_slices: 2, memory_slices: 2, memory_gb: "
      "24, starts: [0, 2]}\n"
      "  - {name: 4g.48gb, compute_slices: 4, memory_slices: 4, memory_gb: "
      "48, starts: [0]}\n");
  CliResult r = Cli({"gpus", "--gpu-table", table, "--gpu", "RTX-TEST-48GB"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("maximal: 5 placed"), std::string::npos) << r.out;
  std::string bad = WriteTempFile(
      "bad-table.yaml",
      "name: BAD\ncompute_slices: 7\nmemory_slices: 8\nmemory_gb: 8\n"
      "profiles:\n  - {name: 3g, compute_slices: 3, memory_slices: 4, "
      "memory_gb: 4, starts: [6]}\n");
  r = Cli({"gpus", "--gpu-table", bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + ":6: profiles[0].starts: start 6 does not fit"),
            std::string::npos)
      << r.err;
}

// A command's body runs with the GPU catalog fixed: the --gpu-table files
// are added while the flags parse, and nothing the command runs (its
// threads included) can change the catalog under another reader.
TEST(CliTest, TheGpuCatalogIsFrozenWhileACommandRuns) {
  mig::GpuModel model = *mig::GpuCatalog::Default().Find("A30-24GB").value();
  model.name = "A30-FROZEN-TEST";
  model.aliases.clear();
  model.pci_device_ids.clear();
  std::ostringstream out, err;
  CommandContext context{out, err};
  CLI::App app{"test"};
  Status during = Status::Ok();
  OnRun(&app, &context,
        [&] { return during = mig::GpuCatalog::AddToDefault(model); });
  app.parse(std::vector<std::string>{});
  EXPECT_EQ(during.code(), Status::Code::kFailedPrecondition)
      << during.message();
  EXPECT_NE(context.exit_code, kExitOk) << err.str();
  EXPECT_FALSE(mig::GpuCatalog::Default().Find("A30-FROZEN-TEST").ok());
  // Between commands (tests run many in one process) it takes tables again.
  EXPECT_TRUE(mig::GpuCatalog::AddToDefault(model).ok());
}

// Each bad input: exit 2 and one message naming the file, line and field.
struct BadInput {
  const char* name;
  std::string workload;  // workload file text ("" = use a good one)
  std::string profiles;  // profile CSV text ("" = the shipped one)
  std::string expected;  // substring of the message; {w} and {p} = paths
};

void PrintTo(const BadInput& b, std::ostream* out) { *out << b.name; }

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

std::string Expand(std::string s, const std::string& w, const std::string& p) {
  for (auto [key, value] : {std::pair{"{w}", w}, std::pair{"{p}", p}}) {
    size_t at = s.find(key);
    if (at != std::string::npos) s.replace(at, 3, value);
  }
  return s;
}

TEST_P(BadInputTest, ExitsTwoNamingFileLineField) {
  const BadInput& c = GetParam();
  std::string w = WriteTempFile(
      std::string(c.name) + ".yaml",
      c.workload.empty()
          ? "gpu: A100-SXM4-80GB\nservices:\n" + std::string(kOneService)
          : c.workload);
  std::string p = c.profiles.empty()
                      ? kA100Profiles
                      : WriteTempFile(std::string(c.name) + ".csv", c.profiles);
  CliResult r = Cli({"optimize", "-w", w, "-p", p, "--algo", "whole"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(Expand(c.expected, w, p)), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

const std::string kCsvHeader =
    "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInputTest,
    ::testing::Values(
        BadInput{"malformed_csv", "",
                 kCsvHeader + "resnet50,A100-SXM4-80GB,1g.10gb,8,1,300,20,\n" +
                     "resnet50,A100-SXM4-80GB,1g.10gb,16,1,fast,30,\n",
                 "{p}:3: throughput: not a finite number: 'fast'"},
        BadInput{"yaml_type",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: lots, "
                 "latency_ms: 100}\n",
                 "", "{w}:3: services[0].throughput: expected a number"},
        BadInput{"unknown_gpu", "gpu: V100\nservices: []\n", "",
                 "{w}:1: gpu: unknown GPU 'V100'"},
        BadInput{"unknown_model",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: gpt5, throughput: 1, latency_ms: 100}\n",
                 "", "{w}:3: services[0].model: model 'gpt5' has no rows"},
        BadInput{"unknown_profile", "",
                 kCsvHeader + "resnet50,A100-SXM4-80GB,6g.60gb,8,1,300,20,\n",
                 "{p}:2: profile: unknown profile '6g.60gb'"},
        BadInput{"duplicate_service",
                 "gpu: A100-SXM4-80GB\nservices:\n" + std::string(kOneService) +
                     kOneService,
                 "", "{w}:4: services[1].name: duplicate service 'r'"},
        BadInput{"negative_throughput",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: -1, "
                 "latency_ms: 100}\n",
                 "",
                 "{w}:3: services[0].throughput: must be from 0.001 to 1e+09, "
                 "got -1"},
        BadInput{"infinite_throughput",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: .inf, "
                 "latency_ms: 100}\n",
                 "",
                 "{w}:3: services[0].throughput: expected a finite number, "
                 "got '.inf'"},
        BadInput{"subnormal_throughput",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: 1e-320, "
                 "latency_ms: 100}\n",
                 "",
                 "{w}:3: services[0].throughput: must be from 0.001 to 1e+09, "
                 "got 1e-320"},
        BadInput{"huge_throughput",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: 1e308, "
                 "latency_ms: 100}\n",
                 "",
                 "{w}:3: services[0].throughput: must be from 0.001 to 1e+09, "
                 "got 1e+308"},
        BadInput{"infinite_cost",
                 "gpus:\n  - {name: A100-SXM4-80GB, cost: .inf}\nservices:\n"
                 "  - {name: r, model: resnet50, throughput: 1, "
                 "latency_ms: 100}\n",
                 "",
                 "{w}:2: gpus[0].cost: expected a finite number, got '.inf'"},
        BadInput{"zero_profile_throughput", "",
                 kCsvHeader + "resnet50,A100-SXM4-80GB,1g.10gb,8,1,0,20,\n",
                 "{p}:2: throughput: must be from 0.001 to 1e+09, got 0"},
        BadInput{"nan_profile_latency", "",
                 kCsvHeader + "resnet50,A100-SXM4-80GB,1g.10gb,8,1,300,nan,\n",
                 "{p}:2: latency_ms: not a finite number: 'nan'"},
        BadInput{"missing_throughput",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: resnet50, latency_ms: 100}\n",
                 "", "{w}:3: services[0].throughput: missing"},
        BadInput{"unservable",
                 "gpu: A100-SXM4-80GB\nservices:\n"
                 "  - {name: r, model: bert, throughput: 5, latency_ms: 2}\n",
                 "",
                 "{w}:3: services[0].latency_ms: service 'r' fits no "
                 "profile: its best reachable latency is 13 ms, over the "
                 "limit of 2 ms"}),
    [](const auto& info) { return std::string(info.param.name); });

// Numbers on the command line past what a run can hold are refused before
// anything runs, naming the flag (issue 36: each of these once overflowed,
// ran past its time limit or exhausted memory).
TEST(CliTest, FlagNumbersOutOfRangeExitTwo) {
  std::string w = Workload("flags.yaml", kOneService);
  std::string d = SourcePath("data/deployments/day.json");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"optimize", "-w", w, "-p", kA100Profiles, "--algo", "milp",
        "--max-gpus", "1e15"},
       "--max-gpus"},
      {{"optimize", "-w", w, "-p", kA100Profiles, "--algo", "milp",
        "--max-gpus", "2000000"},
       "--max-gpus: must be in [1, 1e+06], got 2000000"},
      {{"optimize", "-w", w, "-p", kA100Profiles, "--algo", "milp",
        "--time-limit", "inf"},
       "--time-limit: must be a finite number > 0, got inf"},
      {{"plan", "--from", d, "--to", d, "--spare-gpus", "2147483647"},
       "--spare-gpus: must be in [0, 1e+06], got 2147483647"},
      {{"serve", "-d", d, "-w", SourcePath("data/workloads/day.yaml"), "-p",
        kA100Profiles, "--duration", "1e12"},
       "--duration must be from 0.001 to 1e+06, got 1000000000000"},
      {{"serve", "-d", d, "-w", SourcePath("data/workloads/day.yaml"), "-p",
        kA100Profiles, "--duration", "100000"},
       "arrivals, more than the 1e+08 a run simulates; shorten --duration"},
  };
  for (const auto& [args, message] : cases) {
    CliResult r = Cli(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// An inventory past a region's size is refused at the node that passes it.
TEST(CliTest, AnInventoryPastAMillionGpusExitsTwo) {
  std::string d = SourcePath("data/deployments/day.json");
  std::string nodes =
      "nodes:\n  - {name: a, gpu: A100-SXM4-80GB, gpus: 1000000000}\n";
  std::string i = WriteTempFile("huge-inventory.yaml", nodes);
  CliResult r = Cli({"plan", "--from", d, "--to", d, "--inventory", i});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(i + ":2: nodes[0].gpus: must be from 1 to 64, got "
                           "1000000000"),
            std::string::npos)
      << r.err;
  std::string many = "nodes:\n";
  for (int n = 0; n < 15626; ++n) {
    many +=
        fmt::format("  - {{name: n{}, gpu: A100-SXM4-80GB, gpus: 64}}\n", n);
  }
  i = WriteTempFile("many-inventory.yaml", many);
  r = Cli({"plan", "--from", d, "--to", d, "--inventory", i});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(i + ":15627: nodes[15625].gpus: brings the inventory "
                           "past 1000000 GPUs"),
            std::string::npos)
      << r.err;
}

TEST(CliTest, MissingFilesExitTwo) {
  CliResult r = Cli({"optimize", "-w", "/no/such/w.yaml", "-p", kA100Profiles,
                     "--algo", "whole"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/no/such/w.yaml: cannot open"), std::string::npos);
  r = Cli({"compare", "-w", Workload("m.yaml", kOneService), "-p",
           "/no/such/p.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/no/such/p.csv: cannot open"), std::string::npos);
  r = Cli({"validate", "-w", Workload("m.yaml", kOneService), "-p",
           kA100Profiles, "-d", "/no/such/d.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/no/such/d.json: cannot open"), std::string::npos);
}

TEST(CliTest, AlgorithmThatCannotServeAnswersNo) {
  // vgg16 needs at least 8 ms a batch on 1g and 2 ms on 7g: a 5 ms SLO
  // is servable, but not by all-1g.
  std::string w =
      Workload("no1g.yaml",
               "  - {name: b, model: vgg16, throughput: 50, latency_ms: 5}\n");
  CliResult r =
      Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo", "all-1g"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("service 'b' cannot run on 1g.10gb"), std::string::npos)
      << r.err;
}

TEST(CliTest, ProfilesWithoutRowsAreWarnedOnceAndNotBlamedOnTheSlo) {
  // bert measured on 1g only: whole (7g) cannot use it, and must say it was
  // never measured there rather than that it is too slow.
  std::string p =
      WriteTempFile("bert-1g.csv",
                    "model,gpu,profile,batch,throughput,latency_ms\n"
                    "bert,A100-SXM4-80GB,1g.10gb,1,100,10\n");
  std::string w = Workload(
      "bert.yaml",
      "  - {name: q, model: bert, throughput: 300, latency_ms: 200}\n"
      "  - {name: r, model: bert, throughput: 100, latency_ms: 200}\n");
  const std::string warning =
      "migserve: warning: bert: no measurements on 2g.20gb, 3g.40gb, "
      "4g.40gb, 7g.80gb; those profiles are not used\n";
  CliResult whole = Cli({"optimize", "-w", w, "-p", p, "--algo", "whole"});
  EXPECT_EQ(whole.code, 1) << whole.err;
  EXPECT_NE(whole.err.find("service 'q' cannot run on 7g.80gb: model 'bert' "
                           "was not measured there"),
            std::string::npos)
      << whole.err;
  ASSERT_NE(whole.err.find(warning), std::string::npos) << whole.err;
  EXPECT_EQ(whole.err.find(warning, whole.err.find(warning) + 1),
            std::string::npos)
      << "warned twice: " << whole.err;
  CliResult greedy = Cli({"optimize", "-w", w, "-p", p, "--algo", "greedy"});
  EXPECT_EQ(greedy.code, 0) << greedy.err;
  EXPECT_NE(greedy.err.find(warning), std::string::npos) << greedy.err;
  CliResult full = Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo",
                        "greedy", "-o", testing::TempDir() + "/full.json"});
  EXPECT_EQ(full.err.find("warning"), std::string::npos) << full.err;
}

TEST(CliTest, EveryAlgorithmOutputValidatesOnShippedWorkloads) {
  // Under the sanitizers, one workload of each source: every algorithm's
  // code, a third of the searches.
  const std::vector<std::string> names =
      testing::kAddressSanitizer
          ? std::vector<std::string>{"normal-1", "parva-slo6"}
          : std::vector<std::string>{"normal-1", "lognormal-2", "day",
                                     "night",    "parva-slo1",  "parva-slo6"};
  for (const std::string& name : names) {
    std::string w = SourcePath(std::string("data/workloads/") + name + ".yaml");
    for (const std::string& algo : optimizer::AlgorithmNames()) {
      std::string d = testing::TempDir() + "/" + name + "-" + algo + ".json";
      CliResult opt =
          Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo", algo, "-o",
               d, "--mcts-iterations", "10", "--ga-max-rounds", "1",
               "--ga-population", "2", "--time-limit", "2"});
      ASSERT_EQ(opt.code, 0) << name << " " << algo << ": " << opt.err;
      CliResult val = Cli({"validate", "-w", w, "-p", kA100Profiles, "-d", d});
      EXPECT_EQ(val.code, 0) << name << " " << algo << ": " << val.err;
      EXPECT_NE(val.out.find("valid\n"), std::string::npos);
    }
  }
}

// 3g@0 with 1g@3 overlap: an illegal layout, and r short of its rate.
constexpr const char* kIllegalLayout =
    R"({"gpu": "A100-SXM4-80GB", "gpus": [{"id": 4, "instances": [
         {"profile": "3g.40gb", "start": 0, "service": "r"},
         {"profile": "1g.10gb", "start": 3, "service": "r"}]}]})";

TEST(CliTest, ValidateAnswersNoNamingGpuAndService) {
  std::string w = Workload("v.yaml", kOneService);
  std::string d = WriteTempFile("bad.json", kIllegalLayout);
  CliResult r = Cli({"validate", "-w", w, "-p", kA100Profiles, "-d", d});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("gpu 4: illegal layout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("service 'r':"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("invalid: 2 problem(s)"), std::string::npos) << r.out;
}

TEST(CliTest, ValidateJsonSaysWhatTheTableSays) {
  std::string w = Workload("vj.yaml", kOneService);
  std::string bad = WriteTempFile("bad-j.json", kIllegalLayout);
  CliResult r = Cli({"validate", "-w", w, "-p", kA100Profiles, "-d", bad,
                     "--format", "json"});
  EXPECT_EQ(r.code, 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["gpus"], 1);
  ASSERT_EQ(j["problems"].size(), 2u);
  EXPECT_NE(j["problems"][0].get<std::string>().find("gpu 4: illegal layout"),
            std::string::npos);
  ASSERT_EQ(j["services"].size(), 1u);
  EXPECT_EQ(j["services"][0]["name"], "r");
  EXPECT_EQ(j["services"][0]["replicas"], 2);
  // optimize's default algorithm is milp.
  std::string d = testing::TempDir() + "/vj-good.json";
  CliResult opt = Cli({"optimize", "-w", w, "-p", kA100Profiles, "-o", d});
  ASSERT_EQ(opt.code, 0) << opt.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(d).value())["summary"]["algorithm"],
            "milp");
  r = Cli(
      {"validate", "-w", w, "-p", kA100Profiles, "-d", d, "--format", "json"});
  EXPECT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["valid"], true);
  EXPECT_GE(j["services"][0]["satisfaction"].get<double>(), 1.0);
  EXPECT_EQ(j["problems"], nlohmann::json::array());
  // show --format json: the same GPUs, grouped by node.
  CliResult show = Cli({"show", "-d", d, "--format", "json"});
  ASSERT_EQ(show.code, 0) << show.err;
  nlohmann::json view = nlohmann::json::parse(show.out);
  int gpus = 0;
  for (const auto& node : view["nodes"]) gpus += node["gpus"].get<int>();
  EXPECT_EQ(gpus, j["gpus"]);
  int of_r = 0;
  for (const auto& node : view["nodes"]) {
    for (const auto& group : node["groups"]) {
      for (const auto& i : group["instances"]) {
        if (i["service"] == "r") of_r += group["count"].get<int>();
      }
    }
  }
  EXPECT_EQ(of_r, j["services"][0]["replicas"].get<int>());
  EXPECT_EQ(Cli({"show", "-d", d, "--format", "yaml"}).code, 2);
}

TEST(CliTest, GeneratedWorkloadRoundTripsThroughOptimize) {
  std::string w = testing::TempDir() + "/gen.yaml";
  CliResult g = Cli({"generate", "-p", kA100Profiles, "--services", "9",
                     "--distribution", "lognormal", "--latency", "50,100,200",
                     "--target-gpus", "30", "--seed", "11", "-o", w});
  ASSERT_EQ(g.code, 0) << g.err;
  CliResult c = Cli({"compare", "-w", w, "-p", kA100Profiles, "--format",
                     "json", "--mcts-iterations", "10", "--ga-max-rounds", "1",
                     "--time-limit", "2"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("\"name\": \"relaxed\""), std::string::npos);
  EXPECT_NE(c.out.find("\"gpus\": 30"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("\"valid\": false"), std::string::npos) << c.out;
  // -o writes the same table to a file, and nothing to stdout.
  std::string table = testing::TempDir() + "/compare.txt";
  CliResult o =
      Cli({"compare", "-w", w, "-p", kA100Profiles, "--mcts-iterations", "10",
           "--ga-max-rounds", "1", "--time-limit", "2", "-o", table});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  std::string written = ReadFile(table).value();
  EXPECT_NE(written.find("lp+cuts"), std::string::npos) << written;
}

TEST(CliTest, ModelsPrintsClasses) {
  CliResult r = Cli({"models", "-p", kA100Profiles});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("resnet50"), std::string::npos);
  EXPECT_NE(r.out.find("sub-linear"), std::string::npos);
  // A GPU without rows is a usage error naming the GPUs that have rows.
  CliResult none =
      Cli({"models", "-p", kA100Profiles, "--gpu", "H100-SXM5-80GB"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("has no rows for H100-SXM5-80GB; it has rows for: "
                          "A100-SXM4-80GB"),
            std::string::npos)
      << none.err;
  EXPECT_TRUE(none.out.empty());
  // A model measured without a whole-GPU row is named, not dropped
  // silently.
  const std::string partial =
      WriteTempFile("partial.csv",
                    "model,gpu,profile,batch,procs,throughput,latency_ms\n"
                    "m,A100-SXM4-80GB,1g.10gb,8,1,100,10\n"
                    "m,A100-SXM4-80GB,7g.80gb,8,1,800,10\n"
                    "half,A100-SXM4-80GB,1g.10gb,4,1,100,10\n");
  CliResult some = Cli({"models", "-p", partial});
  ASSERT_EQ(some.code, 0) << some.err;
  EXPECT_NE(some.out.find("m "), std::string::npos) << some.out;
  EXPECT_NE(some.err.find("models: left out on A100-SXM4-80GB (a class needs "
                          "a one-process row on the whole GPU and on a "
                          "smaller instance): half batch 4\n"),
            std::string::npos)
      << some.err;
}

TEST(CliTest, ImportWritesProfilesAndScenarios) {
  std::string dir = testing::TempDir() + "/imp";
  for (const char* sub : {"/prof_data", "/SLO", "/out"}) {
    std::filesystem::create_directories(dir + sub);
  }
  std::string header =
      "Mig instance,Batch size,Workload Number,Throughput,Latency\n";
  ASSERT_TRUE(WriteFileAtomic(dir + "/prof_data/m.csv",
                              header + "1,8,1,100,0.01\n7,8,1,500,0.02\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/SLO/SLO_req_rate.csv", "300\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/SLO/SLO_latency.csv", "100\n").ok());
  CliResult r = Cli({"import", "parvagpu", dir, "-o", dir + "/out/p.csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  CliResult o = Cli({"optimize", "-w", dir + "/out/parva-slo1.yaml", "-p",
                     dir + "/out/p.csv", "--algo", "whole"});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("\"gpus\": 1"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace migserve::cli

namespace migserve::cli {
namespace {

// Solver libraries print on the process's stdout, which RunCli's streams do
// not see: run the binary and check that stdout holds the JSON alone.
TEST(CliBinaryTest, StdoutIsOnlyTheDeployment) {
  std::string w = SourcePath("data/workloads/parva-slo6.yaml");
  for (const char* algo : {"greedy", "two-phase", "milp"}) {
    std::string command = std::string(MIGSERVE_BINARY) + " optimize -w " + w +
                          " -p " + kA100Profiles + " --algo " + algo +
                          " --ga-max-rounds 1 --time-limit 5 2>/dev/null";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
      out.append(buffer, n);
    }
    EXPECT_EQ(pclose(pipe), 0) << algo;
    auto json = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << algo << ": " << out.substr(0, 200);
    EXPECT_EQ(json["summary"]["algorithm"], algo);
  }
}

}  // namespace
}  // namespace migserve::cli

namespace migserve::cli {
namespace {

// Runs the built binary through the shell; returns its stdout and sets
// `code` to its exit status.
std::string Shell(const std::string& command, int* code) {
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    out.append(buffer, n);
  }
  int status = pipe ? pclose(pipe) : -1;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Every output is checked to its end (issue 92: `-o /dev/full` and a full
// standard output exited 0, and as root `-o /dev/full` replaced the device
// with a regular file): each command below fails, naming the output, and
// /dev/full stays the device.
TEST(CliBinaryTest, AFullDiskFailsEveryOutput) {
  struct stat st;
  ASSERT_EQ(stat("/dev/full", &st), 0);
  ASSERT_TRUE(S_ISCHR(st.st_mode));
  const std::string binary = MIGSERVE_BINARY;
  const std::string day = SourcePath("data/deployments/day.json");
  const std::string replicas = testing::WriteTempFile(
      "full-replicas.csv", "service,node,gpu,start,address,port\n");
  const std::string commands[] = {
      "optimize -w " + SourcePath("data/workloads/night.yaml") + " -p " +
          kA100Profiles + " --algo greedy -o /dev/full",
      "plan --from " + SourcePath("data/deployments/night.json") + " --to " +
          SourcePath("data/deployments/night.json") + " -o /dev/full",
      "report -d " + day + " -w " + SourcePath("data/workloads/day.yaml") +
          " -p " + kA100Profiles + " -o /dev/full",
      "router --render -d " + day + " --replicas " + replicas + " -o /dev/full",
      "generate -p " + kA100Profiles + " --services 3 -o /dev/full",
  };
  for (const std::string& command : commands) {
    int code = 0;
    std::string err = Shell(binary + " " + command + " 2>&1 >/dev/null", &code);
    EXPECT_EQ(code, 1) << command << ": " << err;
    EXPECT_NE(err.find("/dev/full: cannot write: No space left on device"),
              std::string::npos)
        << command << ": " << err;
  }
  for (const std::string& command :
       {std::string("gpus"), "optimize -w " +
                                 SourcePath("data/workloads/night.yaml") +
                                 " -p " + kA100Profiles + " --algo greedy"}) {
    int code = 0;
    std::string err = Shell(binary + " " + command + " 2>&1 >/dev/full", &code);
    EXPECT_EQ(code, 1) << command << ": " << err;
    EXPECT_NE(err.find("standard output: write failed"), std::string::npos)
        << command << ": " << err;
  }
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(CliBinaryTest, DashReadsStandardInputAndWritesStandardOutput) {
  std::string binary = MIGSERVE_BINARY;
  std::string w = SourcePath("data/workloads/night.yaml");
  int code = 0;
  std::string named = Shell(binary + " optimize -w " + w + " -p " +
                                kA100Profiles + " --algo greedy 2>/dev/null",
                            &code);
  ASSERT_EQ(code, 0);
  std::string piped = Shell(binary + " optimize -w - -p " + kA100Profiles +
                                " --algo greedy -o - 2>/dev/null < " + w,
                            &code);
  EXPECT_EQ(code, 0);
  auto a = nlohmann::json::parse(named), b = nlohmann::json::parse(piped);
  a["summary"].erase("seconds");
  b["summary"].erase("seconds");
  EXPECT_EQ(a, b);
  Shell(binary + " optimize -w " + w + " -p - --algo greedy 2>/dev/null < " +
            kA100Profiles,
        &code);
  EXPECT_EQ(code, 0);
  Shell(binary + " plan --from " + SourcePath("data/deployments/day.json") +
            " --to - >/dev/null 2>&1 < " +
            SourcePath("data/deployments/night.json"),
        &code);
  EXPECT_EQ(code, 0);
}

// A workload's own LLM table follows its deployment (issue 94: export's
// engine settings, the names vLLM is told and the peak check read the
// shipped table, so a model the workload's table gives an FP8 KV cache was
// credited with KV room its exported pod did not have, and a model only
// in that table got no engine settings): the deployment carries the
// entries the shipped table lacks, and export reads them.
TEST(CliTest, AWorkloadsOwnLlmTableFollowsItsDeployment) {
  const std::string dir = testing::TempDir() + "/own-llm-table";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/models.yaml",
                      "models:\n"
                      "  - {name: acme-8b, aliases: [acme/Acme-8B-Chat], "
                      "parameters_b: 8.03, layers: 32, attention_heads: 32, "
                      "kv_heads: 8, head_dim: 128, dtype: bf16, kv_dtype: fp8, "
                      "max_context: 131072}\n")
          .ok());
  ASSERT_TRUE(WriteFileAtomic(
                  dir + "/w.yaml",
                  "gpu: A100-SXM4-80GB\nllm_models: models.yaml\nservices:\n"
                  "  - {name: chat, model: acme-8b, kind: llm, throughput: 4, "
                  "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, "
                  "output_tokens: 128}\n")
                  .ok());
  CliResult r = Cli({"optimize", "-w", dir + "/w.yaml", "-p", kA100Profiles,
                     "-o", dir + "/d.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json d = nlohmann::json::parse(*ReadFile(dir + "/d.json"));
  ASSERT_EQ(d["llm_models"].size(), 1u) << d.dump();
  EXPECT_EQ(d["llm_models"][0]["name"], "acme-8b");
  EXPECT_EQ(d["llm_models"][0]["kv_dtype"], "fp8");
  r = Cli({"export", "-d", dir + "/d.json", "-o", dir + "/out"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string replicas = *ReadFile(dir + "/out/replicas.yaml");
  size_t kv = replicas.find("name: MIGSERVE_KV_CACHE_DTYPE");
  ASSERT_NE(kv, std::string::npos) << replicas;
  EXPECT_EQ(replicas.substr(replicas.find("value: ", kv), 10), "value: fp8")
      << replicas;
  EXPECT_NE(replicas.find("value: chat acme-8b acme/Acme-8B-Chat"),
            std::string::npos)
      << replicas;
  EXPECT_NE(replicas.find("name: MIGSERVE_MAX_MODEL_LEN"), std::string::npos);
  // A deployment of the shipped table's models carries no table.
  d.erase("llm_models");
  d["services"][0]["model"] = "llama-3.1-8b";
  for (auto& g : d["gpus"]) {
    for (auto& i : g["instances"]) i["throughput"] = 0.5;
  }
  ASSERT_TRUE(WriteFileAtomic(dir + "/shipped.json", d.dump()).ok());
  auto shipped = deployment::LoadDeployment(dir + "/shipped.json");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  ASSERT_TRUE(shipped->services[0].llm_model);
  EXPECT_EQ(shipped->services[0].llm_model->kv_dtype, "");
  EXPECT_FALSE(nlohmann::json::parse(deployment::FormatDeployment(*shipped))
                   .contains("llm_models"));
}

// export --target-resource writes target.yaml, the ServingTarget whose
// spec is the deployment as given (read back, the same deployment); a name
// Kubernetes would refuse is refused.
TEST(CliTest, ExportWritesTheServingTarget) {
  std::string d = SourcePath("data/deployments/night.json");
  std::string dir = testing::TempDir() + "/export-target";
  CliResult r =
      Cli({"export", "-d", d, "--target-resource", "night", "-o", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("target.yaml: the ServingTarget night"),
            std::string::npos)
      << r.err;
  YAML::Node object = YAML::LoadFile(dir + "/target.yaml");
  EXPECT_EQ(object["apiVersion"].as<std::string>(), "migserve.io/v1alpha1");
  EXPECT_EQ(object["kind"].as<std::string>(), "ServingTarget");
  EXPECT_EQ(object["metadata"]["namespace"].as<std::string>(),
            "migserve-replicas");
  auto back = deployment::ParseDeployment(
      kube::YamlToJson(object["spec"]).dump(), "target.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(
      deployment::FormatDeployment(*back),
      deployment::FormatDeployment(deployment::LoadDeployment(d).value()));
  r = Cli(
      {"export", "-d", d, "--target-resource", "Night_1", "-o", dir + "-bad"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--target-resource: "), std::string::npos) << r.err;
}

// The proxy's image is pinned as the install pins the controller's
// (--proxy-image, or the serving spec's proxy.image, the flag first);
// without either, migserve:<version>; a word with a space is refused.
TEST(CliTest, ExportPinsTheProxysImage) {
  nlohmann::json night = nlohmann::json::parse(
      ReadFile(SourcePath("data/deployments/night.json")).value());
  night["summary"]["router"] = "proxy";
  std::string d = testing::WriteTempFile("night-proxy.json", night.dump());
  std::string dir = testing::TempDir() + "/export-proxy";
  const std::string pinned =
      "registry.example.com/platform/migserve@sha256:" + std::string(64, '7');
  CliResult r = Cli({"export", "-d", d, "--proxy-image", pinned, "-o", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string proxy = ReadFile(dir + "/proxy.yaml").value();
  EXPECT_NE(proxy.find("image: " + pinned + "\n"), std::string::npos)
      << proxy.substr(0, 2000);
  EXPECT_EQ(r.err.find("not pinned by digest"), std::string::npos) << r.err;
  r = Cli({"export", "-d", d, "-o", dir + "-default"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string unpinned = ReadFile(dir + "-default/proxy.yaml").value();
  EXPECT_NE(unpinned.find("image: migserve:"), std::string::npos);
  EXPECT_EQ(unpinned.find("@sha256:"), std::string::npos);
  // Said, not silent (issue 90).
  EXPECT_NE(r.err.find("export: proxy.yaml: the proxy's image migserve:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("is not pinned by digest; give --proxy-image"),
            std::string::npos)
      << r.err;
  r = Cli({"export", "-d", d, "--proxy-image", "a b", "-o", dir + "-bad"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--proxy-image: must not hold spaces"),
            std::string::npos)
      << r.err;
  const std::string from_spec =
      "registry.example.com/migserve@sha256:" + std::string(64, '8');
  std::string spec = testing::WriteTempFile(
      "proxy-spec.yaml", "proxy: {image: \"" + from_spec + "\"}\n");
  r = Cli({"export", "-d", d, "--serving", spec, "-o", dir + "-spec"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(ReadFile(dir + "-spec/proxy.yaml")
                .value()
                .find("image: " + from_spec + "\n"),
            std::string::npos);
  r = Cli({"export", "-d", d, "--serving", spec, "--proxy-image", pinned, "-o",
           dir + "-both"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(ReadFile(dir + "-both/proxy.yaml")
                .value()
                .find("image: " + pinned + "\n"),
            std::string::npos);
  std::string bad =
      testing::WriteTempFile("proxy-bad.yaml", "proxy: {image: \"a b\"}\n");
  r = Cli({"export", "-d", d, "--serving", bad, "-o", dir + "-bad-spec"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("proxy-bad.yaml:1: proxy.image: must not hold spaces"),
            std::string::npos)
      << r.err;
}

TEST(CliTest, ExportRefusesDashInsteadOfMakingADirectoryNamedDash) {
  std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(testing::TempDir());
  CliResult r =
      Cli({"export", "-d", SourcePath("data/deployments/day.json"), "-o", "-"});
  bool made = std::filesystem::exists("-");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("-o: export writes several files"), std::string::npos)
      << r.err;
  EXPECT_FALSE(made);
}

}  // namespace
}  // namespace migserve::cli

namespace migserve::cli {
namespace {

// The binary keeps the p99 credits it computed (MIGSERVE_CREDIT_CACHE) and
// a second run reads them instead of simulating: the same deployment. A
// credit edited in the file (halved: 19 GPUs if believed) is refused and
// computed again (10 GPUs, said on stderr). validate reads no cache at
// all. "off" keeps nothing.
TEST(CliBinaryTest, ASecondRunReadsTheCreditsTheFirstKept) {
  std::string dir = testing::TempDir() + "/cli-credits";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string cache = dir + "/credits.db";
  ASSERT_TRUE(WriteFileAtomic(dir + "/one.csv",
                              "model,gpu,profile,batch,procs,throughput,"
                              "latency_ms,memory_gb\n"
                              "m,A100-SXM4-80GB,7g.80gb,1,1,100,10,\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/one.yaml",
                              "gpu: A100-SXM4-80GB\nservices:\n  - {name: s, "
                              "model: m, throughput: 900, latency_ms: 100}\n")
                  .ok());
  auto gpus = [&](const std::string& setting) {
    int code = 0;
    std::string out =
        Shell("MIGSERVE_CREDIT_CACHE=" + setting + " " + MIGSERVE_BINARY +
                  " optimize --algo milp -w " + dir + "/one.yaml -p " + dir +
                  "/one.csv 2>/dev/null",
              &code);
    EXPECT_EQ(code, 0);
    auto json = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << out.substr(0, 200);
    return json.is_discarded() ? -1 : json["summary"]["gpus"].get<int>();
  };
  EXPECT_EQ(gpus(cache), 10);
  ASSERT_TRUE(std::filesystem::exists(cache));
  EXPECT_EQ(gpus(cache), 10);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(cache.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE signed_credit SET value = value / 2",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
  EXPECT_EQ(gpus(cache), 10);
  int code = 0;
  std::string err =
      Shell("MIGSERVE_CREDIT_CACHE=" + cache + " " + MIGSERVE_BINARY +
                " optimize --algo milp -w " + dir + "/one.yaml -p " + dir +
                "/one.csv -o " + dir + "/d.json 2>&1",
            &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(err.find("1 rows refused"), std::string::npos)
      << "refused once, then written again: " << err;
  Shell("MIGSERVE_CREDIT_CACHE=" + dir + "/validate.db " + MIGSERVE_BINARY +
            " validate -w " + dir + "/one.yaml -p " + dir + "/one.csv -d " +
            dir + "/d.json",
        &code);
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir + "/validate.db"));
  std::filesystem::remove(cache);
  EXPECT_EQ(gpus("off"), 10);
  EXPECT_FALSE(std::filesystem::exists(cache));
}

}  // namespace
}  // namespace migserve::cli
