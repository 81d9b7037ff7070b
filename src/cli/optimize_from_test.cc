// `optimize --from` end to end: on day2night and night2day the
// transition-aware target has the fewest GPUs, and the plan to it starts
// strictly fewer replicas than the plan to the plain milp target, safely.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/plan_json.h"
#include "deployment/deployment_json.h"
#include "profile/testing/shipped.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::kA100Profiles;
using testing::SourcePath;

// The replicas a plan starts: creates and migrates.
int PlanStarts(const std::string& from, const std::string& to) {
  CliResult r = Cli({"plan", "--from", from, "--to", to, "--nodes", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("safe in every order"), std::string::npos) << r.err;
  auto plan = cluster::ParsePlan(r.out, "stdout");
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  int starts = 0;
  for (const cluster::Action& a : plan->actions) {
    starts += a.kind == cluster::ActionKind::kCreate ||
              a.kind == cluster::ActionKind::kMigrate;
  }
  return starts;
}

struct FromCase {
  const char* name;
  const char* from;
  const char* workload;
  const char* plain;  // the shipped plain milp target
  int gpus;
};

void PrintTo(const FromCase& c, std::ostream* out) {
  *out << c.name << " (" << c.from << " to " << c.workload << ")";
}

class OptimizeFromTest : public ::testing::TestWithParam<FromCase> {};

TEST_P(OptimizeFromTest, FewestGpusFewerStartsSafePlan) {
  const FromCase& c = GetParam();
  std::string from = SourcePath(c.from);
  std::string aware = testing::TempDir() + "/" + c.name + "-aware.json";
  CliResult r =
      Cli({"optimize", "-w", SourcePath(c.workload), "-p", kA100Profiles,
           "--algo", "milp", "--from", from, "-o", aware});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("pod starts (plain optimum: "), std::string::npos)
      << r.err;
  auto target = deployment::LoadDeployment(aware);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_TRUE(target->Placed());
  const deployment::Summary& s = *target->summary;
  EXPECT_EQ(s.status, deployment::SolveStatus::kOptimal);
  EXPECT_EQ(s.gpus, c.gpus);
  EXPECT_EQ(*s.lower_bound, c.gpus);
  EXPECT_EQ(target->UsedGpus(), c.gpus);
  ASSERT_TRUE(s.transition.has_value());
  const deployment::TransitionCost& plain = s.transition->plain_optimum;
  EXPECT_EQ(plain.gpus, c.gpus);
  int starts = s.transition->cost.pod_starts;
  EXPECT_LT(starts, plain.pod_starts);
  EXPECT_EQ(s.transition->starts_bound, starts);
  EXPECT_GT(s.transition->cost.kept_replicas, plain.kept_replicas);

  int aware_starts = PlanStarts(from, aware);
  int plain_starts = PlanStarts(from, SourcePath(c.plain));
  EXPECT_LT(aware_starts, plain_starts);
  // The planner keeps what the optimizer kept: it starts what the summary
  // says, plus temporary copies only if it needs room.
  EXPECT_GE(aware_starts, starts);
  RecordProperty("aware_plan_starts", aware_starts);
  RecordProperty("plain_plan_starts", plain_starts);
}

INSTANTIATE_TEST_SUITE_P(
    PaperPair, OptimizeFromTest,
    ::testing::Values(FromCase{"day2night", "data/deployments/day.json",
                               "data/workloads/night.yaml",
                               "data/deployments/night.json", 6},
                      FromCase{"night2day", "data/deployments/night.json",
                               "data/workloads/day.yaml",
                               "data/deployments/day.json", 18}),
    [](const ::testing::TestParamInfo<FromCase>& info) {
      return std::string(info.param.name);
    });

TEST(OptimizeFromCliTest, FromItsOwnTargetNothingChanges) {
  std::string day = testing::TempDir() + "/day.json";
  std::string out = testing::TempDir() + "/day-from-day.json";
  CliResult placed =
      Cli({"optimize", "-w", SourcePath("data/workloads/day.yaml"), "-p",
           kA100Profiles, "--algo", "milp", "-o", day});
  ASSERT_EQ(placed.code, 0) << placed.err;
  CliResult r =
      Cli({"optimize", "-w", SourcePath("data/workloads/day.yaml"), "-p",
           kA100Profiles, "--algo", "milp", "--from", day, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  auto target = deployment::LoadDeployment(out).value();
  ASSERT_TRUE(target.summary->transition.has_value());
  EXPECT_EQ(target.summary->transition->cost.pod_starts, 0);
  EXPECT_EQ(target.summary->transition->cost.repartitioned_gpus, 0);
  CliResult plan = Cli({"plan", "--from", day, "--to", out});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_TRUE(cluster::ParsePlan(plan.out, "stdout")->actions.empty());
}

// From a cluster of no GPU at all (issue 90: the documented uninstall
// empties the ServingTarget, and optimize --from and autoscale then
// crashed on the first new GPU): every GPU is new, every service served.
TEST(OptimizeFromCliTest, FromAnEmptyClusterEveryGpuIsNew) {
  std::string empty = testing::WriteTempFile(
      "empty.json", R"({"gpu": "A100-SXM4-80GB", "services": [], "gpus": []})");
  std::string workload = testing::WriteTempFile(
      "two.yaml",
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: bert-1, model: bert, throughput: 900, latency_ms: 100}\n"
      "  - {name: vgg16-1, model: vgg16, throughput: 700, latency_ms: 100}\n");
  std::string out = testing::TempDir() + "/from-empty.json";
  CliResult r = Cli({"optimize", "-w", workload, "-p", kA100Profiles, "--algo",
                     "milp", "--from", empty, "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  CliResult valid =
      Cli({"validate", "-d", out, "-w", workload, "-p", kA100Profiles});
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
  // The move needs the GPUs the empty cluster lacks.
  CliResult plan =
      Cli({"plan", "--from", empty, "--to", out, "--spare-gpus", "2"});
  EXPECT_EQ(plan.code, 0) << plan.err;
}

// survive: {domain: gpu, keep: 1}: from night, the target is day's
// surviving optimum (proven), and validate finds every GPU's loss survived;
// from that target nothing starts.
TEST(OptimizeFromCliTest, ASurvivingTargetFromTheCluster) {
  std::string day = ReadFile(SourcePath("data/workloads/day.yaml")).value();
  std::string workload = testing::WriteTempFile(
      "day-survive.yaml", "survive: {domain: gpu, keep: 1}\n" + day);
  std::string out = testing::TempDir() + "/day-survive-from-night.json";
  CliResult r =
      Cli({"optimize", "-w", workload, "-p", kA100Profiles, "--algo", "milp",
           "--from", SourcePath("data/deployments/night.json"), "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  auto target = deployment::LoadDeployment(out).value();
  EXPECT_TRUE(target.Placed());
  // It carries survive, so the move to it keeps the promise too.
  ASSERT_TRUE(target.survive);
  EXPECT_EQ(target.survive->domain, workload::FailureDomain::kGpu);
  EXPECT_EQ(target.summary->gpus, 20);
  EXPECT_EQ(*target.summary->lower_bound, 20);
  EXPECT_EQ(target.summary->status, deployment::SolveStatus::kOptimal);
  CliResult valid =
      Cli({"validate", "-d", out, "-w", workload, "-p", kA100Profiles});
  EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
  std::string again = testing::TempDir() + "/day-survive-again.json";
  r = Cli({"optimize", "-w", workload, "-p", kA100Profiles, "--algo", "milp",
           "--from", out, "-o", again});
  ASSERT_EQ(r.code, 0) << r.err;
  auto same = deployment::LoadDeployment(again).value();
  EXPECT_EQ(same.summary->transition->cost.pod_starts, 0);
  EXPECT_EQ(same.summary->transition->cost.kept_replicas,
            target.summary->transition->cost.kept_replicas +
                target.summary->transition->cost.pod_starts);
}

// Per node, the serving GPUs of the deployment at `path`.
std::map<std::string, int> ServingPerNode(const std::string& path) {
  std::map<std::string, int> per_node;
  deployment::Deployment d = deployment::LoadDeployment(path).value();
  for (const deployment::DeployedGpu& g : d.gpus) {
    if (g.Serving()) ++per_node[*g.node];
  }
  return per_node;
}

// survive: {domain: node} from a cluster: its nodes are the domains, and
// new nodes hold only what they cannot. Night from day's three nodes (8, 8
// and 2 GPUs) spreads its 6 GPUs over them; day from night's one node of 6
// fills it and puts the rest on two new nodes. Both validate, both are
// their plain optimum, and the transitions keep the promise.
TEST(OptimizeFromCliTest, ASurvivingNodeTargetStaysOnItsNodes) {
  auto workload = [](const std::string& name) {
    return testing::WriteTempFile(
        name + "-node.yaml",
        "survive: {domain: node, keep: 0.5}\n" +
            ReadFile(SourcePath("data/workloads/" + name + ".yaml")).value());
  };
  for (auto [from, name, per_node] :
       {std::tuple{"day", "night",
                   std::map<std::string, int>{
                       {"node-0", 2}, {"node-1", 2}, {"node-2", 2}}},
        std::tuple{"night", "day",
                   std::map<std::string, int>{
                       {"node-0", 6}, {"node-1", 6}, {"node-2", 6}}}}) {
    SCOPED_TRACE(name);
    std::string w = workload(name);
    std::string current =
        SourcePath(std::string("data/deployments/") + from + ".json");
    std::string out = testing::TempDir() + "/" + name + "-node-from.json";
    CliResult r = Cli({"optimize", "-w", w, "-p", kA100Profiles, "--algo",
                       "milp", "--from", current, "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(ServingPerNode(out), per_node);
    auto target = deployment::LoadDeployment(out).value();
    EXPECT_EQ(target.summary->status, deployment::SolveStatus::kOptimal);
    ASSERT_TRUE(target.survive);
    EXPECT_EQ(target.survive->domain, workload::FailureDomain::kNode);
    CliResult valid =
        Cli({"validate", "-d", out, "-w", w, "-p", kA100Profiles});
    EXPECT_EQ(valid.code, 0) << valid.out << valid.err;
    CliResult plan =
        Cli({"plan", "--from", current, "--to", out, "--nodes", "3"});
    EXPECT_EQ(plan.code, 0) << plan.err;
    EXPECT_NE(plan.err.find("after losing any one node"), std::string::npos)
        << plan.err;
  }
}

TEST(OptimizeFromCliTest, UsageErrorsNameTheFlag) {
  std::string night = SourcePath("data/deployments/night.json");
  std::string day = SourcePath("data/workloads/day.yaml");
  CliResult greedy = Cli({"optimize", "-w", day, "-p", kA100Profiles, "--algo",
                          "greedy", "--from", night});
  EXPECT_EQ(greedy.code, 2);
  EXPECT_NE(greedy.err.find("--from: only --algo milp"), std::string::npos)
      << greedy.err;
  CliResult weights = Cli({"optimize", "-w", day, "-p", kA100Profiles, "--algo",
                           "milp", "--from", night, "--weights", "0,0,0"});
  EXPECT_EQ(weights.code, 2);
  EXPECT_NE(weights.err.find("--weights"), std::string::npos) << weights.err;
  CliResult missing = Cli({"optimize", "-w", day, "-p", kA100Profiles, "--algo",
                           "milp", "--from", "/nonexistent.json"});
  EXPECT_EQ(missing.code, 2);
}

}  // namespace
}  // namespace migserve::cli
