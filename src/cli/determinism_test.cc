// The same inputs and options give the same bytes, on an idle machine and
// beside busy loops, at any --jobs: the searches are bounded by work (nodes,
// iterations, simulated requests), the clock only as a safety net, and
// what a deployment writes carries no wall-clock figure unless asked.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autoscale/sizer.h"
#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;
using testing::TempDir;

constexpr const char* kA100Csv = "data/profiles/a100-80gb.csv";

// Keeps every core of the machine (twice over) spinning while it lives.
class BusyLoops {
 public:
  BusyLoops() {
    const unsigned n = 2 * std::max(1u, std::thread::hardware_concurrency());
    for (unsigned k = 0; k < n; ++k) {
      threads_.emplace_back([this] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
    }
  }
  ~BusyLoops() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Runs `args` (whose output goes to `out`) and returns what it wrote.
std::string WrittenBy(std::vector<std::string> args, const std::string& out) {
  args.insert(args.end(), {"-o", out});
  CliResult r = Cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  StatusOr<std::string> written = ReadFile(out);
  return written.ok() ? *written : "";
}

// Runs `make` idle, beside busy loops and as `other` (another --jobs, say)
// and expects one answer each time.
void ExpectSameBytes(const std::function<std::string(const char* tag)>& make) {
  const std::string idle = make("idle");
  ASSERT_FALSE(idle.empty());
  std::string busy;
  {
    BusyLoops loops;
    busy = make("busy");
  }
  EXPECT_EQ(idle, busy) << "the answer changed beside busy loops";
}

TEST(DeterminismTest, OptimizeWritesTheSameDeploymentBesideBusyLoops) {
  // milp with survive: every round a CBC search ends by its nodes.
  const std::string workload = testing::WriteTempFile(
      "determinism-day-survive.yaml",
      "survive: {domain: node, keep: 0.5}\n" +
          ReadFile(SourcePath("data/workloads/day.yaml")).value());
  ExpectSameBytes([&](const char* tag) {
    return WrittenBy({"optimize", "-w", workload, "-p", SourcePath(kA100Csv),
                      "--algo", "milp", "--jobs", tag[0] == 'i' ? "1" : "2"},
                     TempDir() + "/determinism-" + tag + ".json");
  });
  // The credits of normal-1 (p99, computed cold in-process) at 1 and 4
  // threads, and its optimum.
  const std::string one =
      WrittenBy({"optimize", "-w", SourcePath("data/workloads/normal-1.yaml"),
                 "-p", SourcePath(kA100Csv), "--jobs", "1"},
                TempDir() + "/determinism-jobs1.json");
  const std::string four =
      WrittenBy({"optimize", "-w", SourcePath("data/workloads/normal-1.yaml"),
                 "-p", SourcePath(kA100Csv), "--jobs", "4"},
                TempDir() + "/determinism-jobs4.json");
  EXPECT_EQ(one, four);
  // Asked for, the wall-clock figures are written.
  const std::string timed =
      WrittenBy({"optimize", "-w", SourcePath("data/workloads/normal-1.yaml"),
                 "-p", SourcePath(kA100Csv), "--timings"},
                TempDir() + "/determinism-timed.json");
  EXPECT_EQ(one.find("\"seconds\""), std::string::npos);
  EXPECT_NE(timed.find("\"seconds\""), std::string::npos);
  EXPECT_NE(timed.find("\"phase_seconds\""), std::string::npos);
}

// --quiet, on any command, leaves only results, warnings and errors on
// stderr: the searches' and serve's progress lines go.
TEST(DeterminismTest, QuietLeavesOnlyTheResultLine) {
  std::vector<std::string> args = {"optimize",
                                   "-w",
                                   SourcePath("data/workloads/day.yaml"),
                                   "-p",
                                   SourcePath(kA100Csv),
                                   "--from",
                                   SourcePath("data/deployments/night.json"),
                                   "-o",
                                   TempDir() + "/determinism-quiet.json"};
  CliResult loud = Cli(args);
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_NE(loud.err.find("phase 2: fewest starts"), std::string::npos);
  args.push_back("--quiet");
  CliResult quiet = Cli(args);
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("phase 2: fewest starts"), std::string::npos);
  EXPECT_EQ(quiet.err.find("milp: "), std::string::npos) << quiet.err;
  EXPECT_NE(quiet.err.find("optimize: milp --from: 18 GPUs (optimal)"),
            std::string::npos)
      << quiet.err;
  // serve's per-service lines are progress too (they stayed under --quiet).
  std::vector<std::string> serve = {"serve",
                                    "-d",
                                    SourcePath("data/deployments/night.json"),
                                    "-w",
                                    SourcePath("data/workloads/night.yaml"),
                                    "-p",
                                    SourcePath(kA100Csv),
                                    "--duration",
                                    "5"};
  CliResult said = Cli(serve);
  EXPECT_NE(said.err.find("serve: 1/"), std::string::npos) << said.err;
  serve.push_back("--quiet");
  CliResult unsaid = Cli(serve);
  EXPECT_EQ(unsaid.err.find("serve: 1/"), std::string::npos) << unsaid.err;
}

TEST(DeterminismTest, OptimizeFromWritesTheSameTargetBesideBusyLoops) {
  ExpectSameBytes([&](const char* tag) {
    return WrittenBy({"optimize", "-w", SourcePath("data/workloads/day.yaml"),
                      "-p", SourcePath(kA100Csv), "--algo", "milp", "--from",
                      SourcePath("data/deployments/night.json")},
                     TempDir() + "/determinism-from-" + tag + ".json");
  });
}

// The first six hours of the shipped day: the morning's moves up.
TEST(DeterminismTest, ReplayWritesTheSameReportBesideBusyLoops) {
  if (testing::kAddressSanitizer) {
    // Twice six hours of moves, one beside busy loops: minutes under ASan,
    // for code the optimize tests here run under it too.
    GTEST_SKIP() << "the optimized build checks it";
  }
  std::istringstream day(
      ReadFile(SourcePath("data/traces/normal-1-diurnal.csv")).value());
  std::string line, morning;
  while (std::getline(day, line)) {
    if (line.rfind("time_s", 0) != 0 && std::stod(line) > 6 * 3600) break;
    morning += line + "\n";
  }
  const std::string trace =
      testing::WriteTempFile("determinism-morning.csv", morning);
  ExpectSameBytes([&](const char* tag) {
    return WrittenBy({"replay", "--trace", trace, "-w",
                      SourcePath("data/workloads/normal-1.yaml"), "-p",
                      SourcePath(kA100Csv), "--format", "json"},
                     TempDir() + "/determinism-replay-" + tag + ".json");
  });
}

// One autoscale round's decision: from the cluster running night, the
// move to day's rates (what the autoscaler computes from what it observed).
TEST(DeterminismTest, AnAutoscaleMoveIsTheSameBesideBusyLoops) {
  if (testing::kAddressSanitizer) {
    // 54 s there (2026-12-07; 286 s before), both cores busy with its
    // loops, beside the other sanitized tests; SizerTest runs the move
    // sanitized.
    GTEST_SKIP() << "the optimized build checks the answer is the same";
  }
  const workload::Workload day =
      workload::LoadWorkload(SourcePath("data/workloads/day.yaml")).value();
  const profile::ProfileTable profiles =
      profile::LoadProfileCsv(SourcePath(kA100Csv)).value();
  const deployment::Deployment night =
      deployment::LoadDeployment(SourcePath("data/deployments/night.json"))
          .value();
  const cluster::ClusterState current =
      cluster::ClusterFromDeployment(night, {8, 0}).value();
  std::vector<double> rates;
  for (const workload::Service& s : day.services)
    rates.push_back(s.throughput.value());
  // The move's nodes bound it; its clock (10 s by default, a safety net)
  // is put out of the way: under ASan beside the busy loops the same
  // nodes take longer than that.
  autoscale::SizerOptions options;
  options.move_time_limit_s = 600;
  autoscale::Sizer sizer =
      autoscale::Sizer::Make(day, profiles, options).value();
  ExpectSameBytes([&](const char*) {
    auto move = sizer.DeployWithin(rates, current, 0, false);
    EXPECT_TRUE(move.ok()) << move.status().ToString();
    return move.ok() ? deployment::FormatDeployment(move->target) : "";
  });
}

}  // namespace
}  // namespace migserve::cli
