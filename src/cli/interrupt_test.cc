// Ctrl-C during a search keeps its work (issue 19): the real binary, sent
// SIGINT once its genetic search is under way, writes the best deployment
// so far with summary.status "interrupted" and exits 130; a second signal
// ends it at once. Every long command ends within a second of SIGTERM
// (issue 76), keeping what it found or leaving no file behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

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

// A long command and what SIGTERM must leave: `keeps` (it writes what it
// found and exits 130), or nothing (it ends by the signal before writing,
// and no temporary file of its output is left).
struct LongRun {
  std::string name;
  std::vector<std::string> args;  // "{out}": the output's path
  bool keeps = false;
};

// How long a stop may take after the signal: a second, as the issue asks;
// more under a sanitizer, which slows every step several times.
double StopLimitS() {
#if defined(__SANITIZE_ADDRESS__)
  return 5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return 5;
#endif
#endif
  return 1;
}

TEST(InterruptTest, EveryLongCommandEndsWithinASecondOfSigterm) {
  const std::string p = SourcePath("data/profiles/a100-80gb.csv");
  const std::string normal = SourcePath("data/workloads/normal-1.yaml");
  const std::vector<LongRun> runs = {
      {"optimize",
       {"optimize", "-w", normal, "-p", p, "--algo", "two-phase",
        "--time-limit", "600", "-o", "{out}"},
       true},
      {"compare", {"compare", "-w", normal, "-p", p, "-o", "{out}"}},
      {"serve",
       {"serve", "-d", SourcePath("data/deployments/night.json"), "-w",
        SourcePath("data/workloads/night.yaml"), "-p", p, "--duration", "10000",
        "-o", "{out}"}},
      {"replay",
       {"replay", "--trace", SourcePath("data/traces/normal-1-diurnal.csv"),
        "-w", normal, "-p", p, "-o", "{out}"}},
  };
  for (const LongRun& run : runs) {
    SCOPED_TRACE(run.name);
    const std::string dir = TempDir() + "/sigterm-" + run.name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string out = dir + "/out.json";
    const std::string log = TempDir() + "/sigterm-" + run.name + ".log";
    std::vector<std::string> args = {"migserve"};
    for (const std::string& a : run.args)
      args.push_back(a == "{out}" ? out : a);
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, STDERR_FILENO);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(MIGSERVE_BINARY, argv.data());
      _exit(127);
    }
    // Well into its work (the optimizer's first round), then the signal.
    if (run.keeps) WaitFor(log, "round 1:");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0)
        << "ended before the signal; make its input longer";
    kill(pid, SIGTERM);
    auto sent = std::chrono::steady_clock::now();
    waitpid(pid, &status, 0);
    double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent)
            .count();
    EXPECT_LT(took, StopLimitS());
    if (run.keeps) {
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 130) << *ReadFile(log);
      auto d = nlohmann::json::parse(ReadFile(out).value(), nullptr, false);
      EXPECT_EQ(d["summary"]["status"], "interrupted");
    } else {
      // Ended by the signal, or by a handler that stops at once (130).
      EXPECT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) ||
                  (WIFEXITED(status) && WEXITSTATUS(status) == 130))
          << "status " << status << ": " << *ReadFile(log);
    }
    // Its output whole or absent: never a part, never a temporary.
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      EXPECT_EQ(entry.path(), run.keeps ? out : "") << "left behind";
    }
  }
}

}  // namespace
}  // namespace migserve::cli
