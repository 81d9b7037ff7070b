// A two-type fleet end to end through the commands: optimize (fleet
// workload) -> place --inventory -> export -> plan to another mixed target ->
// simulate, each GPU judged by its own model.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/plan_json.h"
#include "mig/gpu_catalog.h"
#include "mig/layout.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;
using testing::TempDir;
using testing::WriteTempFile;

// The fleets' MILP solves below run under the sanitizers too: 9 to 29 s
// each there (2026-12-07, a clang Debug ASan tree, one at a time), 1 to 5
// s optimized; they were skipped there while they took 80 to 270 s.

// `optimize --algo milp` with `args`. The MILP ends by its work limits
// (--milp-nodes, the survive rounds); its clock, 60 s by default, is a
// safety net that a sanitized build beside other tests reached (the first
// round alone took 43 s there on an idle machine), and these tests check
// answers, not times: they lift it.
CliResult OptimizeMilp(std::vector<std::string> args) {
  args.insert(args.begin(), "optimize");
  for (const char* a : {"--algo", "milp", "--time-limit", "600"}) {
    args.push_back(a);
  }
  return Cli(args);
}

// The A100 rows, and H100 rows made from them: the same models, 1.6 times
// the throughput on every profile (H100s are faster and cost more).
std::string FleetProfiles() {
  std::string a100 =
      ReadFile(SourcePath("data/profiles/a100-80gb.csv")).value();
  std::string out = a100;
  std::istringstream lines(a100);
  std::string header, line;
  std::getline(lines, header);
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    if (f.size() < 7 || f[1] != "A100-SXM4-80GB") continue;
    f[1] = "H100-SXM5-80GB";
    f[5] = std::to_string(std::stod(f[5]) * 1.6);
    std::string row;
    for (size_t i = 0; i < f.size(); ++i) row += (i ? "," : "") + f[i];
    if (line.back() == ',') row += ",";
    out += row + "\n";
  }
  return WriteTempFile("fleet-h100.csv", out);
}

std::string FleetWorkload(const std::string& name, double scale) {
  return WriteTempFile(
      name,
      fmt::format("gpus:\n  - {{name: A100-SXM4-80GB, cost: 2}}\n"
                  "  - {{name: H100-SXM5-80GB, cost: 3}}\n"
                  "capacity_model: paper\n"
                  "services:\n"
                  "  - {{name: r, model: resnet50, throughput: {}, "
                  "latency_ms: 100}}\n"
                  "  - {{name: b, model: bert, throughput: {}, latency_ms: "
                  "200}}\n",
                  4000 * scale, 600 * scale));
}

constexpr const char* kInventory =
    "nodes:\n"
    "  - {name: gpu-a1, gpu: A100-SXM4-80GB, gpus: 8}\n"
    "  - {name: gpu-a2, gpu: A100-SXM4-80GB, gpus: 8}\n"
    "  - {name: gpu-h1, gpu: H100-SXM5-80GB, gpus: 8}\n"
    "  - {name: gpu-h2, gpu: H100-SXM5-80GB, gpus: 8}\n";

const std::map<std::string, std::string> kModelOfNode = {
    {"gpu-a1", "A100-SXM4-80GB"},
    {"gpu-a2", "A100-SXM4-80GB"},
    {"gpu-h1", "H100-SXM5-80GB"},
    {"gpu-h2", "H100-SXM5-80GB"}};

// Optimizes and places one target; returns the placed deployment's path.
std::string PlacedTarget(const std::string& name, double scale,
                         const std::string& profiles,
                         const std::string& inventory) {
  std::string optimized = TempDir() + "/" + name + "-optimized.json";
  CliResult r = OptimizeMilp({"-w", FleetWorkload(name + ".yaml", scale), "-p",
                              profiles, "-o", optimized});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string placed = TempDir() + "/" + name + "-placed.json";
  r = Cli({"place", "-d", optimized, "--inventory", inventory, "-o", placed});
  EXPECT_EQ(r.code, 0) << r.err;
  return placed;
}

// Configs fill nodes in the order the inventory lists them (docs/fleets.md),
// not in their names' order: night's 6 GPUs go to zeta, listed first.
TEST(FleetCliTest, PlaceFillsNodesInInventoryOrder) {
  std::string inventory =
      WriteTempFile("zeta-first.yaml",
                    "nodes:\n  - {name: zeta, gpu: A100-SXM4-80GB, gpus: 8}\n"
                    "  - {name: alpha, gpu: A100-SXM4-80GB, gpus: 8}\n");
  std::string placed = TempDir() + "/zeta-first.json";
  CliResult r = Cli({"place", "-d", SourcePath("data/deployments/night.json"),
                     "--inventory", inventory, "-o", placed});
  ASSERT_EQ(r.code, 0) << r.err;
  auto d = nlohmann::json::parse(ReadFile(placed).value());
  int used = 0;
  for (const auto& g : d["gpus"]) {
    if (g["instances"].empty()) continue;
    ++used;
    EXPECT_EQ(g["node"], "zeta") << g.dump();
  }
  EXPECT_EQ(used, 6);
}

TEST(FleetCliTest, TwoTypeFleetGoesFromOptimizeToSimulate) {
  std::string profiles = FleetProfiles();
  std::string inventory = WriteTempFile("inventory.yaml", kInventory);
  std::string day = PlacedTarget("fleet-day", 1.0, profiles, inventory);
  std::string night = PlacedTarget("fleet-night", 0.4, profiles, inventory);

  // The placed deployment lists every inventory GPU, each on a node of its
  // own model, with a layout legal for that model.
  auto placed = nlohmann::json::parse(ReadFile(day).value());
  ASSERT_EQ(placed["gpus"].size(), 32u);
  std::set<std::string> models_used;
  for (const auto& g : placed["gpus"]) {
    std::string node = g["node"];
    std::string model = g["gpu"];
    EXPECT_EQ(kModelOfNode.at(node), model);
    EXPECT_GE(g["index"].get<int>(), 0);
    EXPECT_LT(g["index"].get<int>(), 8);
    const mig::GpuModel& gpu = *mig::GpuCatalog::Default().Find(model).value();
    std::vector<mig::Instance> instances;
    for (const auto& i : g["instances"]) {
      int p = gpu.FindProfile(i["profile"].get<std::string>());
      ASSERT_GE(p, 0) << model << " " << i["profile"];
      instances.push_back({p, i["start"].get<int>()});
      if (!i["service"].is_null()) models_used.insert(model);
    }
    std::string why;
    EXPECT_TRUE(mig::IsLegal(gpu, mig::Layout(instances), {}, &why)) << why;
  }
  EXPECT_EQ(models_used.size(), 2u) << "the optimum uses both types";

  // export: pods pinned to inventory node names, mig-parted configs named
  // per node that has a GPU in use (idle GPUs are left alone), each entry's
  // profiles those of the node's model.
  std::string dir = TempDir() + "/fleet-export";
  CliResult r = Cli({"export", "-d", day, "-o", dir});
  ASSERT_EQ(r.code, 0) << r.err;
  YAML::Node parted = YAML::LoadFile(dir + "/mig-parted.yaml");
  for (const auto& [node, model] : kModelOfNode) {
    bool used = false;
    for (const auto& g : placed["gpus"]) {
      used |= g["node"] == node && !g["instances"].empty();
    }
    ASSERT_EQ(parted["mig-configs"][node].IsSequence(), used) << node;
    const mig::GpuModel& gpu = *mig::GpuCatalog::Default().Find(model).value();
    for (const YAML::Node& entry : parted["mig-configs"][node]) {
      for (const auto& device : entry["mig-devices"]) {
        EXPECT_GE(gpu.FindProfile(device.first.as<std::string>()), 0)
            << node << " " << device.first.as<std::string>();
      }
    }
  }
  for (const YAML::Node& doc : YAML::LoadAllFromFile(dir + "/replicas.yaml")) {
    std::string node = doc["spec"]["template"]["spec"]["nodeSelector"]
                          ["kubernetes.io/hostname"]
                              .as<std::string>();
    EXPECT_EQ(kModelOfNode.count(node), 1u) << node;
  }

  // plan to another mixed target, over the inventory.
  r = Cli({"plan", "--from", day, "--to", night, "--inventory", inventory});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("safe in every order"), std::string::npos);
  auto plan = cluster::ParsePlan(r.out, "plan");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const cluster::Action& a : plan->actions) {
    EXPECT_EQ(a.at.model->name, kModelOfNode.at(a.at.gpu.node));
    if (a.kind == cluster::ActionKind::kMigrate) {
      EXPECT_EQ(a.to.model, a.at.model);
    }
  }

  // simulate both ways: no service below min(before, after).
  for (auto [from, to] : {std::pair{day, night}, std::pair{night, day}}) {
    std::string report = TempDir() + "/fleet-report.json";
    r = Cli({"simulate", "--from", from, "--to", to, "--inventory", inventory,
             "--report", report});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("no drop"), std::string::npos) << r.out;
    auto json = nlohmann::json::parse(ReadFile(report).value());
    EXPECT_TRUE(json["ok"].get<bool>());
  }
}

// optimize --inventory places its deployment; with survive: {domain:
// node}, the fleet's nodes are the failure domains: night's GPUs spread over
// three nodes (6 GPUs, its plain optimum, where nodes of eight filled in
// order take 12), and validate finds every node's loss survived.
TEST(FleetCliTest, OptimizeSpreadsASurvivingDeploymentOverTheFleetsNodes) {
  std::string workload = WriteTempFile(
      "night-node.yaml",
      "survive: {domain: node, keep: 0.5}\n" +
          ReadFile(SourcePath("data/workloads/night.yaml")).value());
  std::string profiles = SourcePath("data/profiles/a100-80gb.csv");
  std::string inventory =
      WriteTempFile("three-nodes.yaml",
                    "nodes:\n  - {name: n1, gpu: A100-SXM4-80GB, gpus: 8}\n"
                    "  - {name: h1, gpu: H100-SXM5-80GB, gpus: 8}\n"
                    "  - {name: n2, gpu: A100-SXM4-80GB, gpus: 8}\n"
                    "  - {name: n3, gpu: A100-SXM4-80GB, gpus: 8}\n");
  std::string unplaced = TempDir() + "/night-node-unplaced.json";
  ASSERT_EQ(OptimizeMilp({"-w", workload, "-p", profiles, "-o", unplaced}).code,
            0);
  std::string placed = TempDir() + "/night-node-placed.json";
  CliResult r = OptimizeMilp(
      {"-w", workload, "-p", profiles, "--inventory", inventory, "-o", placed});
  ASSERT_EQ(r.code, 0) << r.err;
  auto d = nlohmann::json::parse(ReadFile(placed).value());
  EXPECT_EQ(d["gpus"].size(), 32u);
  std::map<std::string, int> serving;
  for (const auto& g : d["gpus"]) {
    bool serves = false;
    for (const auto& i : g["instances"]) serves |= i.contains("service");
    if (serves) ++serving[g["node"].get<std::string>()];
  }
  EXPECT_EQ(serving,
            (std::map<std::string, int>{{"n1", 2}, {"n2", 2}, {"n3", 2}}));
  EXPECT_EQ(d["summary"]["gpus"], 6);
  auto u = nlohmann::json::parse(ReadFile(unplaced).value());
  EXPECT_EQ(u["summary"]["gpus"], 12);
  r = Cli({"validate", "-d", placed, "-w", workload, "-p", profiles});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Nodes of the workload's model only; --from keeps the current GPUs.
  std::string h100_only =
      WriteTempFile("h100-only.yaml",
                    "nodes:\n  - {name: h1, gpu: H100-SXM5-80GB, gpus: 8}\n");
  r = OptimizeMilp({"-w", workload, "-p", profiles, "--inventory", h100_only});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(
      r.err.find("--inventory: " + h100_only + " has no A100-SXM4-80GB GPUs"),
      std::string::npos)
      << r.err;
  r = OptimizeMilp(
      {"-w", SourcePath("data/workloads/night.yaml"), "-p", profiles, "--from",
       SourcePath("data/deployments/night.json"), "--inventory", inventory});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--inventory: --from places"), std::string::npos)
      << r.err;
}

// A mixed fleet that must survive a GPU: rounds of raised rates over both
// types (three H100s at cost 9 where the plain fleet is an A100 and an H100
// at 5), and validate finds every GPU's loss survived.
TEST(FleetCliTest, AMixedFleetSurvivesAGpu) {
  std::string profiles = FleetProfiles();
  std::string plain = ReadFile(FleetWorkload("fleet-plain.yaml", 1.0)).value();
  std::string workload = WriteTempFile(
      "fleet-survive.yaml", "survive: {domain: gpu, keep: 1}\n" + plain);
  std::string out = TempDir() + "/fleet-survive.json";
  CliResult r = OptimizeMilp({"-w", workload, "-p", profiles, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  auto d = nlohmann::json::parse(ReadFile(out).value());
  EXPECT_EQ(d["summary"]["gpus"], 3);
  EXPECT_EQ(d["summary"]["cost"], 9);
  EXPECT_EQ(d["summary"]["cost_bound"], 5);
  EXPECT_GE(d["summary"]["survive_rounds"].get<int>(), 2);
  r = Cli({"validate", "-d", out, "-w", workload, "-p", profiles});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // The plain fleet does not survive: validate names the GPU.
  std::string fragile = TempDir() + "/fleet-fragile.json";
  ASSERT_EQ(OptimizeMilp({"-w", FleetWorkload("fleet-plain.yaml", 1.0), "-p",
                          profiles, "-o", fragile})
                .code,
            0);
  r = Cli({"validate", "-d", fragile, "-w", workload, "-p", profiles});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(": losing gpu "), std::string::npos) << r.err;
}

// Over nodes, a node holds GPUs of one type: the inventory's nodes of each
// type, or (unplaced) nodes of eight numbered on across the types. Every
// serving GPU is put on a node of its model, and validate finds every
// node's loss survived (it reads the nodes the deployment names).
TEST(FleetCliTest, AMixedFleetSurvivesANode) {
  std::string profiles = FleetProfiles();
  std::string plain = ReadFile(FleetWorkload("fleet-plain.yaml", 1.0)).value();
  std::string inventory =
      WriteTempFile("fleet-node-inventory.yaml", kInventory);
  for (const char* keep : {"1", "0.5"}) {
    std::string workload = WriteTempFile(
        "fleet-survive-node.yaml",
        fmt::format("survive: {{domain: node, keep: {}}}\n", keep) + plain);
    std::string out = TempDir() + "/fleet-survive-node.json";
    CliResult r = OptimizeMilp(
        {"-w", workload, "-p", profiles, "--inventory", inventory, "-o", out});
    ASSERT_EQ(r.code, 0) << keep << r.err;
    auto d = nlohmann::json::parse(ReadFile(out).value());
    std::set<std::string> nodes;
    for (const auto& g : d["gpus"]) {
      if (g["instances"].empty()) continue;
      std::string node = g["node"];
      EXPECT_EQ(kModelOfNode.at(node), g["gpu"]) << keep << " " << node;
      nodes.insert(node);
    }
    EXPECT_GE(nodes.size(), 2u) << keep;
    r = Cli({"validate", "-d", out, "-w", workload, "-p", profiles});
    EXPECT_EQ(r.code, 0) << keep << r.out << r.err;
  }
  // Keep 1 takes two nodes of one type (four H100s, cost 12); unplaced,
  // a type's first eight GPUs share a node, so keep 0.5 needs both types.
  std::string half =
      WriteTempFile("fleet-survive-half.yaml",
                    "survive: {domain: node, keep: 0.5}\n" + plain);
  std::string out = TempDir() + "/fleet-survive-half.json";
  CliResult r = OptimizeMilp({"-w", half, "-p", profiles, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  auto d = nlohmann::json::parse(ReadFile(out).value());
  std::map<std::string, std::set<std::string>> models_on;
  for (const auto& g : d["gpus"]) {
    models_on[g["node"].get<std::string>()].insert(g["gpu"].get<std::string>());
  }
  EXPECT_EQ(models_on.size(), 2u);
  for (const auto& [node, models] : models_on) {
    EXPECT_EQ(models.size(), 1u) << node;
  }
  r = Cli({"validate", "-d", out, "-w", half, "-p", profiles});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Keeping everything unplaced would need each type to carry it all on
  // one node: the rounds run out, and more time would not help.
  std::string all = WriteTempFile("fleet-survive-all.yaml",
                                  "survive: {domain: node, keep: 1}\n" + plain);
  r = OptimizeMilp({"-w", all, "-p", profiles});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("after 12 rounds of spare capacity, the most it tries"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("raise --time-limit"), std::string::npos) << r.err;
}

TEST(FleetCliTest, RefusesWhatCannotWorkInsteadOfGuessing) {
  std::string profiles = FleetProfiles();
  std::string optimized = TempDir() + "/fleet-refuse.json";
  ASSERT_EQ(OptimizeMilp({"-w", FleetWorkload("fleet-refuse.yaml", 1.0), "-p",
                          profiles, "-o", optimized})
                .code,
            0);
  // No H100 in the fleet: place names the model.
  std::string a100_only =
      WriteTempFile("a100-only.yaml",
                    "nodes:\n  - {name: gpu-a1, gpu: A100-SXM4-80GB, "
                    "gpus: 8}\n");
  CliResult r = Cli({"place", "-d", optimized, "--inventory", a100_only});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("H100-SXM5-80GB GPUs but the inventory"),
            std::string::npos)
      << r.err;
  // A mixed deployment that is not placed cannot be exported.
  r = Cli({"export", "-d", optimized, "-o", TempDir() + "/refused"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("migserve place"), std::string::npos) << r.err;
  // A bad inventory names its file, line and field.
  std::string bad =
      WriteTempFile("bad-inventory.yaml",
                    "nodes:\n  - {name: a, gpu: A100-SXM4-80GB, gpus: 8}\n"
                    "  - {name: b, gpu: T4, gpus: 8}\n");
  r = Cli({"place", "-d", optimized, "--inventory", bad});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad + ":3: nodes[1].gpu: unknown GPU 'T4'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace migserve::cli
