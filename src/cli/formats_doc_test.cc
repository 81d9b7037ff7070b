// docs/formats.md's examples are real: every fenced block is preceded by
// "<!-- check: KIND [ARGS] -->"; input formats are parsed by their parser,
// output formats must have the fields the command writes today, and the
// commands shown must exist (issue 15).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "autoscale/policy_state.h"
#include "autoscale/replay_json.h"
#include "autoscale/trace.h"
#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/inventory.h"
#include "cluster/plan_json.h"
#include "deployment/deployment_json.h"
#include "kubernetes/serving_spec.h"
#include "llm/bench_import.h"
#include "llm/llm_measurement.h"
#include "mig/gpu_catalog.h"
#include "profile/migperf_import.h"
#include "profile/model_analyzer_import.h"
#include "profile/perf_analyzer_import.h"
#include "profile/profile_csv.h"
#include "report/report_inputs.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;
using testing::TempDir;

struct Example {
  int line = 0;                    // of the opening fence
  std::vector<std::string> check;  // KIND, then its arguments
  std::string text;
};

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Every fenced block of `markdown`; a block without a check line above it
// has an empty `check`.
std::vector<Example> Examples(const std::string& markdown) {
  std::vector<Example> examples;
  std::istringstream in(markdown);
  std::string line, previous;
  const std::regex check(R"(<!-- check: (.*) -->)");
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.starts_with("```")) {
      Example e;
      e.line = n;
      std::smatch m;
      if (std::regex_match(previous, m, check)) e.check = Words(m[1]);
      while (std::getline(in, line) && !line.starts_with("```")) {
        ++n;
        e.text += line + "\n";
      }
      ++n;
      examples.push_back(std::move(e));
    }
    previous = line;
  }
  return examples;
}

// True if every object in `doc` has exactly the keys of the object at the
// same place in `real`; an array's elements must each match some element
// of the real array. Values are not compared: they are examples.
::testing::AssertionResult SameFields(const nlohmann::json& doc,
                                      const nlohmann::json& real,
                                      const std::string& path) {
  if (doc.is_object()) {
    if (!real.is_object()) {
      return ::testing::AssertionFailure() << path << ": not an object";
    }
    // Maps keyed by data (action kinds, service names) are not fields.
    if (path.ends_with(".actions") || path.ends_with("[].capacity")) {
      return ::testing::AssertionSuccess();
    }
    std::set<std::string> doc_keys, real_keys;
    for (const auto& [k, v] : doc.items()) doc_keys.insert(k);
    for (const auto& [k, v] : real.items()) real_keys.insert(k);
    if (doc_keys != real_keys) {
      return ::testing::AssertionFailure()
             << path << ": keys " << nlohmann::json(doc_keys).dump()
             << " documented, " << nlohmann::json(real_keys).dump()
             << " written";
    }
    for (const auto& [k, v] : doc.items()) {
      auto r = SameFields(v, real[k], path + "." + k);
      if (!r) return r;
    }
  } else if (doc.is_array()) {
    if (!real.is_array()) {
      return ::testing::AssertionFailure() << path << ": not an array";
    }
    for (size_t i = 0; i < doc.size(); ++i) {
      bool found = false;
      std::string why;
      for (const auto& element : real) {
        auto r = SameFields(doc[i], element, path + "[]");
        if (r) found = true;
        why = r.message();
      }
      if (!found) {
        return ::testing::AssertionFailure()
               << path << "[" << i << "] matches no written element (" << why
               << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

nlohmann::json Written(const std::string& kind) {
  const std::string day = SourcePath("data/deployments/day.json");
  const std::string night = SourcePath("data/deployments/night.json");
  const std::string profiles = SourcePath("data/profiles/a100-80gb.csv");
  const std::string night_w = SourcePath("data/workloads/night.yaml");
  if (kind == "simulation-report") {
    std::string report = TempDir() + "/formats-sim.json";
    CliResult r = Cli({"simulate", "--from", day, "--to", night, "--nodes", "3",
                       "--report", report});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(ReadFile(report).value());
  }
  if (kind == "replay-report") {
    // Two of night's services at their rates, then at 3 times: one move up,
    // both short until it is done.
    std::string workload = testing::WriteTempFile(
        "doc-replay.yaml",
        "gpu: A100-SXM4-80GB\n"
        "services:\n"
        "  - {name: bert-1, model: bert, throughput: 1881, latency_ms: 100}\n"
        "  - {name: resnet50-1, model: resnet50, throughput: 1631, "
        "latency_ms: 100}\n");
    std::string trace = "time_s,service,rate\n";
    for (double t : {0, 300, 900}) {
      double scale = t == 0 ? 1 : 3;
      trace += fmt::format("{},bert-1,{}\n{},resnet50-1,{}\n", t, 1881 * scale,
                           t, 1631 * scale);
    }
    CliResult r =
        Cli({"replay", "--trace",
             testing::WriteTempFile("doc-trace.csv", trace), "-w", workload,
             "-p", profiles, "--format", "json", "--oracle-interval", "900"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  if (kind == "validate-report") {
    CliResult r = Cli({"validate", "-d", night, "-w", night_w, "-p", profiles,
                       "--format", "json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  if (kind == "serve-report") {
    CliResult r = Cli({"serve", "-d", night, "-w", night_w, "-p", profiles,
                       "--format", "json", "--duration", "5"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  CliResult r = Cli({"compare", "-w", night_w, "-p", profiles, "--format",
                     "json", "--mcts-iterations", "5", "--ga-max-rounds", "1",
                     "--ga-population", "2", "--time-limit", "2"});
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Checks one example; returns the failure, or "" when it holds.
std::string Check(const Example& e) {
  const std::string& kind = e.check[0];
  const std::string source = "docs/formats.md example";
  auto status_of = [](const auto& parsed) {
    return parsed.ok() ? std::string() : parsed.status().ToString();
  };
  if (kind == "profile-csv") {
    auto t = profile::ParseProfileCsv(e.text, source);
    if (t.ok() && t->rows.empty()) return "no rows";
    return status_of(t);
  }
  if (kind == "workload") {
    return status_of(workload::ParseWorkload(e.text, source));
  }
  if (kind == "deployment") {
    return status_of(deployment::ParseDeployment(e.text, source));
  }
  if (kind == "inventory") {
    return status_of(cluster::ParseInventory(e.text, source));
  }
  if (kind == "plan") return status_of(cluster::ParsePlan(e.text, source));
  if (kind == "serving-spec") {
    return status_of(kubernetes::ParseServingSpec(e.text, source));
  }
  if (kind == "gpu-table") return status_of(mig::ParseGpuModel(e.text, source));
  if (kind == "autoscale-state") {
    return status_of(autoscale::ParsePolicyState(e.text, source));
  }
  if (kind == "rate-trace") {
    return status_of(autoscale::ParseRateTrace(e.text, source));
  }
  if (kind == "perf-analyzer" && e.check.size() == 2) {
    return status_of(profile::ImportPerfAnalyzerCsv(e.text, e.check[1], {}));
  }
  if (kind == "model-analyzer" && e.check.size() == 3) {
    profile::ModelAnalyzerOptions options;
    options.gpu = e.check[1];
    options.profile = e.check[2];
    return status_of(profile::ImportModelAnalyzerCsv(e.text, source, options));
  }
  if (kind == "migperf" && e.check.size() == 2) {
    profile::ImportedProfiles out;
    Status s = profile::ImportMigPerfCsv(e.text, source, e.check[1], &out);
    if (s.ok() && out.profiles.rows.empty()) return "no rows";
    return s.ok() ? "" : s.ToString();
  }
  if (kind == "llm-measurements") {
    auto rows = llm::ParseLlmMeasurements(e.text, source);
    if (rows.ok() && rows->empty()) return "no rows";
    return status_of(rows);
  }
  if (kind == "vllm-bench" || kind == "aiperf") {
    llm::BenchImportOptions options;
    if (e.check.size() == 3) {
      options.gpu = e.check[1];
      options.profile = e.check[2];
    }
    std::vector<std::string> warnings;
    return status_of(llm::ImportBenchResult(
        kind == "aiperf" ? llm::BenchFormat::kAiperf : llm::BenchFormat::kVllm,
        e.text, source, options, &warnings));
  }
  if (kind == "simulation-report" || kind == "serve-report" ||
      kind == "compare-report" || kind == "replay-report" ||
      kind == "validate-report") {
    auto r = SameFields(nlohmann::json::parse(e.text), Written(kind), "$");
    if (!r) return r.message();
    // What report --replay reads.
    if (kind == "replay-report") {
      return status_of(autoscale::ParseReplayJson(e.text, source));
    }
    return "";
  }
  if (kind == "commands") {
    std::istringstream in(e.text);
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> w = Words(line);
      if (w.size() < 2 || w[0] != "migserve") return "not a migserve command";
      std::vector<std::string> help = {w[1]};
      if (w[1] == "import" && w.size() > 2) help.push_back(w[2]);
      help.push_back("--help");
      if (Cli(help).code != 0) return "no such command: " + line;
    }
    return "";
  }
  return "unknown check '" + kind + "'";
}

TEST(FormatsDocTest, EveryExampleIsCheckedAndHolds) {
  const std::string doc = ReadFile(SourcePath("docs/formats.md")).value();
  std::map<std::string, int> checked;
  for (const Example& e : Examples(doc)) {
    ASSERT_FALSE(e.check.empty())
        << "docs/formats.md:" << e.line << ": a block without a check line";
    EXPECT_EQ(Check(e), "")
        << "docs/formats.md:" << e.line << " (" << e.check[0] << ")";
    ++checked[e.check[0]];
  }
  for (const char* kind : {"profile-csv",
                           "workload",
                           "deployment",
                           "inventory",
                           "plan",
                           "simulation-report",
                           "serve-report",
                           "compare-report",
                           "serving-spec",
                           "gpu-table",
                           "perf-analyzer",
                           "model-analyzer",
                           "migperf",
                           "commands",
                           "rate-trace",
                           "replay-report",
                           "validate-report",
                           "llm-measurements",
                           "vllm-bench",
                           "aiperf"}) {
    EXPECT_GE(checked[kind], 1) << "docs/formats.md shows no " << kind;
  }
}

TEST(FormatsDocTest, TheReadmesCheckedExamplesHold) {
  int checked = 0;
  for (const Example& e : Examples(ReadFile(SourcePath("README.md")).value())) {
    if (e.check.empty()) continue;  // commands to run
    EXPECT_EQ(Check(e), "") << "README.md:" << e.line;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << "the inline workload and profile CSV";
}

TEST(FormatsDocTest, FieldComparisonCatchesAMissingOrExtraField) {
  nlohmann::json real = {{"a", 1}, {"b", {{{"c", 2}}, {{"d", 3}}}}};
  EXPECT_TRUE(SameFields({{"a", 0}, {"b", {{{"d", 0}}}}}, real, "$"));
  EXPECT_FALSE(SameFields({{"a", 0}}, real, "$"));
  EXPECT_FALSE(SameFields({{"a", 0}, {"b", {{{"e", 0}}}}}, real, "$"));
  EXPECT_EQ(
      Check({1, {"workload"}, "gpu: A100-SXM4-80GB\nservics: []\n"}).empty(),
      false);
}

}  // namespace
}  // namespace migserve::cli
