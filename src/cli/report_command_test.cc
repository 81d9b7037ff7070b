#include <gtest/gtest.h>

#include <filesystem>

#include "cli/cli_test_util.h"
#include "util/file.h"
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

}  // namespace
}  // namespace migserve::cli
