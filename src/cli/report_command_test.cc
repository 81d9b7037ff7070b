#include <gtest/gtest.h>

#include <filesystem>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::CountMatches;
using testing::SourcePath;
using testing::TempDir;

TEST(ReportCommandTest, DrawsTheTransitionFromSimulateOutputs) {
  const std::string dir = TempDir() + "/report";
  std::filesystem::create_directory(dir);
  CliResult sim =
      Cli({"simulate", "--from", SourcePath("data/deployments/day.json"),
           "--to", SourcePath("data/deployments/night.json"), "--nodes", "3",
           "--report", dir + "/sim.json", "--before", dir + "/before.json",
           "--after", dir + "/after.json"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  CliResult r = Cli({"report", "-d", dir + "/after.json", "--from",
                     dir + "/before.json", "--simulation", dir + "/sim.json",
                     "-w", SourcePath("data/workloads/night.yaml"), "-p",
                     SourcePath("data/profiles/a100-80gb.csv"), "-o",
                     dir + "/report.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "report: 24 GPUs drawn -> " + dir + "/report.html\n");
  std::string html = ReadFile(dir + "/report.html").value();
  // before: day on 18 of 24 GPUs; after: night on 6; the rest idle.
  EXPECT_EQ(CountMatches(html, "<g class=\"gpu"), 48);
  EXPECT_NE(html.find("data-freed=\"12\" data-taken=\"0\""), std::string::npos);
  EXPECT_EQ(CountMatches(html, "<svg class=\"capacity\""), 5);
  EXPECT_EQ(CountMatches(html, "<svg class=\"bar-chart satisfaction\""), 1);
  // The after picture is where replicas ended, on named GPUs.
  EXPECT_NE(html.find("data-node=\"node-0\" data-gpu=\"0\" "
                      "data-profile=\"1g.10gb\" data-start=\"0\" "
                      "data-service=\"bert-1\""),
            std::string::npos);
}

TEST(ReportCommandTest, WrongInputsAreNamed) {
  const std::string day = SourcePath("data/deployments/day.json");
  CliResult half = Cli({"report", "-d", day, "-w", "x.yaml"});
  EXPECT_EQ(half.code, 2);
  EXPECT_NE(half.err.find("-w and -p go together"), std::string::npos);
  // A deployment where a simulation report is expected.
  CliResult wrong = Cli({"report", "-d", day, "--simulation", day});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("not the JSON that"), std::string::npos)
      << wrong.err;
  CliResult out = Cli({"report", "-d", day});
  EXPECT_EQ(out.code, 0);
  EXPECT_TRUE(out.out.starts_with("<!DOCTYPE html>"));
}

// report --replay draws a day replay wrote, with its trace's rates, and
// with or without a deployment; flags that describe a deployment ask for
// one.
TEST(ReportCommandTest, DrawsAReplayedDayAndNamesWhatItLacks) {
  const std::string dir = TempDir() + "/report-replay";
  std::filesystem::create_directory(dir);
  std::string replay =
      testing::WriteTempFile("replay.json",
                             R"({"services": ["r"], "start_s": 0, "end_s": 1800,
      "policy": {"gpu_hours": 1.5, "peak_gpus": 4, "transitions": 1,
                 "short_minutes": 1.2, "short_minutes_by_service": {"r": 1.2}},
      "static_peak": {"gpu_hours": 2, "peak_gpus": 4, "transitions": 0,
                      "short_minutes": 0, "short_minutes_by_service": {}},
      "oracle": {"gpu_hours": 1.5, "peak_gpus": 4, "transitions": 0,
                 "short_minutes": 0, "short_minutes_by_service": {}},
      "declined": 0,
      "events": [{"time_s": 600, "move": "up", "reason": "up: r",
                  "gpus_before": 2, "gpus_after": 4, "pod_starts": 2,
                  "makespan_s": 72, "problem": ""}],
      "samples": [{"time_s": 0, "gpus": 2, "capacity": [3300]},
                  {"time_s": 600, "gpus": 4, "capacity": [6600]}]})");
  std::string trace = testing::WriteTempFile(
      "replay-trace.csv",
      "time_s,service,rate\n0,r,3000\n600,r,6000\n1800,r,6000\n");
  CliResult r = Cli({"report", "--replay", replay, "--trace", trace, "-o",
                     dir + "/day.html"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "report: a replayed day of 1 move drawn -> " + dir + "/day.html\n");
  std::string html = ReadFile(dir + "/day.html").value();
  EXPECT_EQ(CountMatches(html,
                         "<svg class=\"replay-service\" "
                         "data-service=\"r\" data-short-minutes=\"1.2\""),
            1);
  EXPECT_EQ(CountMatches(html, "<polyline class=\"rate-line\""), 1);
  EXPECT_EQ(CountMatches(html, "<line class=\"move up\""), 1);
  EXPECT_EQ(CountMatches(html, "<g class=\"gpu"), 0);
  const std::string day = SourcePath("data/deployments/day.json");
  CliResult both = Cli({"report", "-d", day, "--replay", replay});
  EXPECT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(CountMatches(both.out, "<svg class=\"replay-gpus\""), 1);
  EXPECT_GT(CountMatches(both.out, "<g class=\"gpu"), 0);

  CliResult none = Cli({"report", "-o", dir + "/none.html"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("report draws a deployment (-d) or a replayed day "
                          "(--replay): give one"),
            std::string::npos)
      << none.err;
  CliResult plan = Cli({"report", "--replay", replay, "--plan", day});
  EXPECT_EQ(plan.code, 2);
  EXPECT_NE(plan.err.find("--plan goes with the deployment it describes: "
                          "give -d"),
            std::string::npos)
      << plan.err;
  CliResult rates = Cli({"report", "-d", day, "--trace", trace});
  EXPECT_EQ(rates.code, 2);
  EXPECT_NE(rates.err.find("--trace gives the rates of a replayed day"),
            std::string::npos);
  CliResult wrong = Cli({"report", "--replay", day});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("not the JSON that replay --format json writes"),
            std::string::npos)
      << wrong.err;
}

}  // namespace
}  // namespace migserve::cli
