// A router kind is one registration (queueing/router_kind.h). A toy kind
// that spreads and dispatches as `random` does and keeps no proxy, registered
// here and nowhere else, is accepted by every command that reads a workload
// or a deployment, and each command acts on its facets.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cli/command.h"
#include "profile/testing/shipped.h"
#include "queueing/router_kind.h"
#include "util/registry_freeze.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::kA100Profiles;
using testing::SourcePath;

// Every command runs with the kinds frozen (OnRun): one that tried to
// register a kind mid-run would be refused.
TEST(RouterKindCliTest, ACommandRunsWithTheKindsFrozen) {
  std::ostringstream out, err;
  CommandContext context{out, err};
  CLI::App app;
  bool frozen = false;
  OnRun(&app, &context, [&] {
    frozen = FreezeRegistries::Frozen();
    return Status::Ok();
  });
  app.parse(std::vector<std::string>{});
  EXPECT_TRUE(frozen);
  EXPECT_FALSE(FreezeRegistries::Frozen());
}

TEST(RouterKindCliTest, AToyKindRegisteredOnceIsAcceptedByEveryCommand) {
  ASSERT_TRUE(
      queueing::RegisterRouterKind({"toy", queueing::Spreading::kThinning,
                                    queueing::Dispatch::kReplica,
                                    queueing::DataPlane::kGatewayOnly})
          .ok());
  std::string night = testing::WriteTempFile(
      "night-toy.yaml",
      ReadFile(SourcePath("data/workloads/night.yaml")).value() +
          "router: toy\n");
  std::string toy = testing::TempDir() + "/night-toy.json";
  CliResult r = Cli({"optimize", "-w", night, "-p", kA100Profiles, "--algo",
                     "milp", "-o", toy});
  ASSERT_EQ(r.code, 0) << r.err;
  // Credits thinned at random, as random's: 8 GPUs (the proxy's 6,
  // ServeCliTest.EachRouterHoldsItsOwnCreditsAndOnlyThose).
  EXPECT_NE(r.err.find("8 GPUs"), std::string::npos) << r.err;
  nlohmann::json d = nlohmann::json::parse(ReadFile(toy).value());
  EXPECT_EQ(d["summary"]["router"], "toy");

  r = Cli({"validate", "-w", night, "-p", kA100Profiles, "-d", toy});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;

  for (const char* routing : {"", "toy"}) {
    std::vector<std::string> args = {"serve",       "-d",       toy,
                                     "-w",          night,      "-p",
                                     kA100Profiles, "--format", "json"};
    if (*routing != '\0') args.insert(args.end(), {"--routing", routing});
    r = Cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["routing"], "toy");
    EXPECT_TRUE(j["ok"].get<bool>()) << r.out;
  }

  // No proxy: export writes no proxy.yaml in any flavour.
  for (const char* flavor : {"device-plugin", "dra", "gpu-operator"}) {
    std::string dir = testing::TempDir() + "/toy-export-" + flavor;
    r = Cli({"export", "-d", toy, "--flavor", flavor, "--serving",
             SourcePath("examples/triton/serving.yaml"), "-o", dir});
    EXPECT_EQ(r.code, 0) << flavor << ": " << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/routing.yaml")) << flavor;
    EXPECT_FALSE(std::filesystem::exists(dir + "/proxy.yaml")) << flavor;
  }

  std::string day = SourcePath("data/deployments/day.json");
  r = Cli({"plan", "--from", day, "--to", toy, "-p", kA100Profiles});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli({"simulate", "--from", day, "--to", toy});
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli({"report", "-d", toy, "-w", night, "-p", kA100Profiles, "--from", day,
           "-o", testing::TempDir() + "/toy-report.html"});
  EXPECT_EQ(r.code, 0) << r.err;

  std::string one = testing::WriteTempFile(
      "one-toy.yaml",
      "gpu: A100-SXM4-80GB\nrouter: toy\nservices:\n"
      "  - {name: r, model: resnet50, throughput: 3000, latency_ms: 100}\n");
  r = Cli({"compare", "-w", one, "-p", kA100Profiles, "--mcts-iterations", "20",
           "--ga-max-rounds", "2", "--time-limit", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::string trace = testing::WriteTempFile(
      "one-toy.csv", "time_s,service,rate\n0,r,3000\n600,r,6000\n");
  r = Cli({"replay", "--trace", trace, "-w", one, "-p", kA100Profiles});
  EXPECT_EQ(r.code, 0) << r.err;

  std::string bad = testing::WriteTempFile(
      "bad-router.yaml",
      "gpu: A100-SXM4-80GB\nrouter: toys\nservices:\n"
      "  - {name: r, model: resnet50, throughput: 3000, latency_ms: 100}\n");
  r = Cli({"optimize", "-w", bad, "-p", kA100Profiles, "--algo", "greedy"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("must be proxy, gateway-api, random or toy, got 'toys'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace migserve::cli
