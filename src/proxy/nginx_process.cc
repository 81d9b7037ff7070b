#include "proxy/nginx_process.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "util/file.h"

extern char** environ;

namespace migserve::proxy {
namespace {

using Clock = std::chrono::steady_clock;

// Spawns `args`; returns the child's pid or -1.
pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  return pid;
}

// Runs `args` to the end; returns its exit status (-1 if it did not run).
int RunToEnd(const std::vector<std::string>& args) {
  pid_t pid = Spawn(args);
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last lines of nginx's error log, for messages.
std::string LogTail(const std::string& prefix) {
  std::ifstream in(prefix + "/error.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size();
       ++i) {
    out += "\n  " + lines[i];
  }
  return out;
}

// Waits up to `timeout_s` for `pid` to end; returns whether it did.
bool Reap(pid_t pid, double timeout_s) {
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < until) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The processes whose parent is `parent` (nginx's workers), from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // pid (comm) state ppid ...: the name may hold spaces and parentheses.
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) != 2) {
      continue;
    }
    if (ppid == parent) out.push_back(std::atoi(stat.c_str()));
  }
  return out;
}

}  // namespace

std::string NginxProcess::ConfigPath() const {
  return setup_.prefix + "/nginx.conf";
}

Status NginxProcess::Write(const ProxyConfig& config) const {
  return WriteFileAtomic(ConfigPath(), RenderNginxConfig(config, setup_));
}

StatusOr<std::unique_ptr<NginxProcess>> NginxProcess::Start(
    const std::string& binary, const NginxSetup& setup,
    const ProxyConfig& config) {
  NginxSetup foreground = setup;
  foreground.daemon = false;
  std::unique_ptr<NginxProcess> p(new NginxProcess(binary, foreground));
  std::error_code ec;
  std::filesystem::create_directories(setup.prefix, ec);
  if (ec) {
    return Status::Unavailable(
        fmt::format("nginx: cannot create {}: {}", setup.prefix, ec.message()));
  }
  MIGSERVE_RETURN_IF_ERROR(p->Write(config));
  p->pid_ =
      Spawn({binary, "-p", setup.prefix + "/", "-c", p->ConfigPath(), "-q"});
  if (p->pid_ < 0) {
    return Status::Unavailable(fmt::format(
        "nginx: cannot run {} (install it: tools/install-deps.sh)", binary));
  }
  // nginx exits at once if it cannot bind or read its configuration.
  if (Reap(p->pid_, 0.3)) {
    p->pid_ = -1;
    return Status::Unavailable(fmt::format("nginx: {} exited at start:{}",
                                           binary, LogTail(setup.prefix)));
  }
  return p;
}

NginxProcess::~NginxProcess() {
  if (pid_ < 0) return;
  kill(pid_, SIGQUIT);
  if (!Reap(pid_, 10)) {
    kill(pid_, SIGKILL);
    Reap(pid_, 5);
  }
}

Status NginxProcess::Apply(const ProxyConfig& config) {
  std::string live = ConfigPath();
  std::string next = live + ".next";
  MIGSERVE_RETURN_IF_ERROR(
      WriteFileAtomic(next, RenderNginxConfig(config, setup_)));
  if (RunToEnd({binary_, "-t", "-q", "-p", setup_.prefix + "/", "-c", next}) !=
      0) {
    return Status::InvalidArgument(
        fmt::format("nginx -t refused generation {}:{}", config.generation,
                    LogTail(setup_.prefix)));
  }
  std::error_code ec;
  std::filesystem::rename(next, live, ec);
  if (ec) {
    return Status::Unavailable(
        fmt::format("cannot replace {}: {}", live, ec.message()));
  }
  draining_ = ChildrenOf(pid_);
  if (kill(pid_, SIGHUP) != 0) {
    return Status::Unavailable(
        fmt::format("nginx (pid {}) is not running", pid_));
  }
  return Status::Ok();
}

int NginxProcess::ListenPort() const {
  return std::atoi(setup_.listen.substr(setup_.listen.rfind(':') + 1).c_str());
}

Status NginxProcess::ApplyAndDrain(const ProxyConfig& config) {
  MIGSERVE_RETURN_IF_ERROR(Apply(config));
  MIGSERVE_RETURN_IF_ERROR(
      WaitForGeneration("127.0.0.1", ListenPort(), config.generation, 10));
  double timeout_s = setup_.drain_timeout_s + 5;
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::vector<pid_t> now = ChildrenOf(pid_);
    std::erase_if(draining_, [&](pid_t old) {
      return std::find(now.begin(), now.end(), old) == now.end();
    });
    if (draining_.empty()) return Status::Ok();
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::DeadlineExceeded(
      fmt::format("nginx: {} old worker(s) still serve after {} s",
                  draining_.size(), timeout_s));
}

Status WaitForGeneration(const std::string& host, int port, long generation,
                         double timeout_s) {
  httplib::Client client(host, port);
  client.set_connection_timeout(1);
  client.set_read_timeout(1);
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string seen = "nothing";
  for (;;) {
    if (auto res = client.Get("/migserve/generation");
        res && res->status == 200) {
      seen = res->body.substr(0, res->body.find('\n'));
      char* end = nullptr;
      long served = std::strtol(seen.c_str(), &end, 10);
      if (end != seen.c_str() && served >= generation) return Status::Ok();
    }
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::DeadlineExceeded(fmt::format(
      "proxy {}:{} did not serve generation {} within {} s (it served {})",
      host, port, generation, timeout_s, seen));
}

}  // namespace migserve::proxy
