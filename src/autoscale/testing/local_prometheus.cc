#include "autoscale/testing/local_prometheus.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "boundary/input_file.h"
#include "util/file.h"
#include "util/test_util.h"

extern char** environ;

namespace migserve::autoscale {

std::string PrometheusBinary() {
  const char* env = std::getenv("MIGSERVE_PROMETHEUS");
  return env != nullptr ? env : "/usr/bin/prometheus";
}

StatusOr<std::unique_ptr<LocalPrometheus>> LocalPrometheus::Start(
    const std::vector<ScrapeTarget>& targets, const std::string& file_sd) {
  std::unique_ptr<LocalPrometheus> p(new LocalPrometheus());
  static int started = 0;
  p->dir_ = testing::TempDir() + fmt::format("/prometheus-{}", started++);
  std::filesystem::create_directories(p->dir_);
  p->port_ = testing::FreePort();
  std::string config =
      "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      "scrape_configs:\n";
  if (!targets.empty()) {
    config += "  - job_name: triton\n    static_configs:\n";
  }
  for (const ScrapeTarget& t : targets) {
    config += fmt::format("      - targets: ['{}']\n", t.address);
    if (!t.labels.empty()) {
      config += "        labels:\n";
      for (const auto& [k, v] : t.labels) {
        config += fmt::format("          {}: '{}'\n", k, v);
      }
    }
  }
  if (!file_sd.empty()) {
    config += fmt::format(
        "  - job_name: pods\n    file_sd_configs:\n"
        "      - files: ['{}']\n        refresh_interval: 1s\n",
        file_sd);
  }
  std::string config_path = p->dir_ + "/prometheus.yml";
  MIGSERVE_RETURN_IF_ERROR(WriteFileAtomic(config_path, config));
  std::string log_path = p->dir_ + "/prometheus.log";
  std::vector<std::string> args = {
      PrometheusBinary(), "--config.file=" + config_path,
      "--storage.tsdb.path=" + p->dir_ + "/data",
      fmt::format("--web.listen-address=127.0.0.1:{}", p->port_),
      "--log.level=warn"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  int rc =
      posix_spawn(&p->pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    p->pid_ = -1;
    return Status::Unavailable(fmt::format(
        "cannot start {} (tools/install-deps.sh installs it)", args[0]));
  }
  httplib::Client client("127.0.0.1", p->port_);
  client.set_connection_timeout(1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = client.Get("/-/ready");
    if (res && res->status == 200) return p;
    int status = 0;
    if (waitpid(p->pid_, &status, WNOHANG) == p->pid_) {
      p->pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  StatusOr<std::string> log = ReadFile(log_path);
  return Status::Unavailable("Prometheus did not become ready: " +
                             (log.ok() ? *log : std::string("no log")));
}

LocalPrometheus::~LocalPrometheus() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
}

std::string LocalPrometheus::url() const {
  return fmt::format("http://127.0.0.1:{}", port_);
}

}  // namespace migserve::autoscale
