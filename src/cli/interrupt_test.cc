// Ctrl-C during a search keeps its work (issue 19): the real binary, sent
// SIGINT once its genetic search is under way, writes the best deployment
// so far with summary.status "interrupted" and exits 130; a second signal
// ends it at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;
using testing::TempDir;

// Starts `migserve optimize` (two-phase, long time limit) writing `output`,
// its stderr to `log`; returns its pid.
pid_t StartOptimize(const std::string& output, const std::string& log) {
  std::string workload = SourcePath("data/workloads/normal-1.yaml");
  std::string profiles = SourcePath("data/profiles/a100-80gb.csv");
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    execl(MIGSERVE_BINARY, "migserve", "optimize", "-w", workload.c_str(), "-p",
          profiles.c_str(), "--algo", "two-phase", "--time-limit", "600", "-o",
          output.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits until `log` says `text` (at most five minutes: the credits come
// first, and under a sanitizer on a busy machine they take a while).
void WaitFor(const std::string& log, const std::string& text) {
  for (int i = 0; i < 3000; ++i) {
    auto seen = ReadFile(log);
    if (seen.ok() && seen->find(text) != std::string::npos) return;
    usleep(100000);
  }
  ADD_FAILURE() << log << " never said " << text;
}

int ExitCode(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(InterruptTest, SigintWritesTheBestSoFarAndExits130) {
  std::string output = TempDir() + "/interrupted.json";
  std::string log = TempDir() + "/interrupted.log";
  pid_t pid = StartOptimize(output, log);
  WaitFor(log, "round 1:");
  kill(pid, SIGINT);
  EXPECT_EQ(ExitCode(pid), 130) << *ReadFile(log);
  nlohmann::json d = nlohmann::json::parse(ReadFile(output).value());
  EXPECT_EQ(d["summary"]["status"], "interrupted");
  EXPECT_EQ(d["summary"]["stopped"], "interrupted");
  CliResult v =
      Cli({"validate", "-w", SourcePath("data/workloads/normal-1.yaml"), "-p",
           SourcePath("data/profiles/a100-80gb.csv"), "-d", output});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

TEST(InterruptTest, SecondSignalExitsAtOnce) {
  std::string output = TempDir() + "/twice.json";
  std::string log = TempDir() + "/twice.log";
  pid_t pid = StartOptimize(output, log);
  WaitFor(log, "fast algorithm:");
  kill(pid, SIGINT);
  WaitFor(log, "interrupted: stopping");
  kill(pid, SIGINT);
  EXPECT_EQ(ExitCode(pid), 130);
}

}  // namespace
}  // namespace migserve::cli
