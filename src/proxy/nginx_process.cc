#include "proxy/nginx_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "boundary/input_file.h"
#include "util/file.h"

extern char** environ;

namespace migserve::proxy {
namespace {

using Clock = std::chrono::steady_clock;

// Spawns `args` with its stderr to the file `stderr_path`; returns the
// child's pid or -1.
pid_t Spawn(const std::vector<std::string>& args,
            const std::string& stderr_path) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) !=
      0) {
    pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Runs `args` to the end; returns its exit status (-1 if it did not run).
int RunToEnd(const std::vector<std::string>& args,
             const std::string& stderr_path) {
  pid_t pid = Spawn(args, stderr_path);
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The last lines of `path` (nginx's error log or stderr), for messages: of
// its last 64 KiB, whatever the log has grown to.
std::string LogTail(const std::string& path) {
  StatusOr<std::string> tail = ReadTail(path, 64 << 10);
  std::istringstream in(tail.ok() ? *tail : std::string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // One line, so that a log line or an Event carries the reason (issue
  // 92: "nginx -t refused generation N:" ended empty, the reason on the
  // lines after).
  std::string out;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size();
       ++i) {
    if (lines[i].empty()) continue;
    out += (out.empty() ? " " : " | ") + lines[i];
  }
  return out;
}

// Waits up to `timeout_s` for the child `pid` to end; returns whether it
// did (or is no child of ours any more).
bool Reap(pid_t pid, double timeout_s) {
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int status = 0;
    pid_t reaped = waitpid(pid, &status, WNOHANG);
    if (reaped == pid || (reaped < 0 && errno == ECHILD)) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The line /proc/`dir`/stat holds ("pid (comm) state ppid ..."), or empty
// if the process is gone: its first 4 KiB (the line is well under 1 KiB).
std::string ProcStat(const std::string& dir) {
  StatusOr<std::string> head = ReadHead(dir + "/stat", 4096);
  if (!head.ok()) return "";
  return head->substr(0, head->find('\n'));
}

// Whether `pid` is a live nginx process (not a zombie, not another program
// that took the number).
bool LiveNginx(pid_t pid) {
  std::string stat = ProcStat(fmt::format("/proc/{}", pid));
  if (stat.empty()) return false;
  size_t open = stat.find('(');
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return false;
  return stat.compare(open + 1, close - open - 1, "nginx") == 0 &&
         close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// A token no other process on the port would answer with.
std::string InstanceToken() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}", random(), random());
}

// The processes whose parent is `parent` (nginx's workers), from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::string stat = ProcStat(entry.path().string());
    if (stat.empty()) continue;
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
  return setup_.prefix.str() + "/nginx.conf";
}

Status NginxProcess::Write(const ProxyConfig& config) const {
  MIGSERVE_RETURN_IF_ERROR(WriteOpenAiScript(config, setup_));
  return WriteFileAtomic(ConfigPath(), RenderNginxConfig(config, setup_));
}

StatusOr<std::unique_ptr<NginxProcess>> NginxProcess::Start(
    const std::string& binary, const NginxSetup& setup,
    const ProxyConfig& config) {
  NginxSetup foreground = setup;
  foreground.daemon = false;
  if (foreground.instance.str().empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(foreground.instance,
                              ConfigWord::Parse(InstanceToken()));
  }
  std::unique_ptr<NginxProcess> p(new NginxProcess(binary, foreground));
  std::error_code ec;
  std::filesystem::create_directories(setup.prefix.str(), ec);
  if (ec) {
    return Status::Unavailable(fmt::format("nginx: cannot create {}: {}",
                                           setup.prefix.str(), ec.message()));
  }
  MIGSERVE_RETURN_IF_ERROR(p->Write(config));
  MIGSERVE_RETURN_IF_ERROR(p->Launch());
  return p;
}

Status NginxProcess::Launch() {
  std::string errors = setup_.prefix.str() + "/nginx.stderr";
  pid_ = Spawn(
      {binary_, "-p", setup_.prefix.str() + "/", "-c", ConfigPath(), "-q"},
      errors);
  if (pid_ < 0) {
    return Status::Unavailable(fmt::format(
        "nginx: cannot run {} (install it: tools/install-deps.sh)", binary_));
  }
  // nginx exits if it cannot read its configuration, and when a port stays
  // taken after it tried for some 2.5 s.
  constexpr double kTimeoutS = 10;
  auto until = Clock::now() + std::chrono::duration<double>(kTimeoutS);
  for (;;) {
    if (Reap(pid_, 0)) {
      pid_ = -1;
      return Status::Unavailable(fmt::format(
          "nginx: {} exited at start:{}{}", binary_, LogTail(errors),
          LogTail(setup_.prefix.str() + "/error.log")));
    }
    if (Answers()) {
      workers_ = ChildrenOf(pid_);
      return Status::Ok();
    }
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  KillAll();
  return Status::Unavailable(
      fmt::format("nginx: {} did not answer on {} within {} s:{}", binary_,
                  setup_.listen.HostPort(), kTimeoutS,
                  LogTail(setup_.prefix.str() + "/error.log")));
}

bool NginxProcess::Answers() const {
  httplib::Client client(ListenHost(), ListenPort());
  client.set_connection_timeout(1);
  client.set_read_timeout(1);
  auto res = client.Get("/migserve/generation");
  return res &&
         res->get_header_value("X-Migserve-Instance") == setup_.instance.str();
}

void NginxProcess::KillAll() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Reap(pid_, 5);
    pid_ = -1;
  }
  std::vector<pid_t> left = workers_;
  left.insert(left.end(), draining_.begin(), draining_.end());
  left.insert(left.end(), lingering_.begin(), lingering_.end());
  for (pid_t w : left) {
    if (LiveNginx(w)) kill(w, SIGKILL);
  }
  // Orphans belong to init (or to us, when we are the pod's first process).
  auto until = Clock::now() + std::chrono::seconds(5);
  for (pid_t w : left) {
    while (Clock::now() < until && LiveNginx(w)) {
      waitpid(w, nullptr, WNOHANG);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  workers_.clear();
  draining_.clear();
  lingering_.clear();
}

NginxProcess::~NginxProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGQUIT);
    if (Reap(pid_, 10)) pid_ = -1;
  }
  KillAll();
}

Status NginxProcess::Check() {
  if (pid_ < 0) return Status::Unavailable("nginx is not running");
  if (Reap(pid_, 0)) {
    pid_t dead = pid_;
    pid_ = -1;
    return Status::Unavailable(
        fmt::format("nginx (pid {}) exited:{}", dead,
                    LogTail(setup_.prefix.str() + "/error.log")));
  }
  std::vector<pid_t> now = ChildrenOf(pid_);
  if (!now.empty()) workers_ = now;
  if (!Answers()) {
    return Status::Unavailable(
        fmt::format("nginx (pid {}) does not answer on {}", pid_,
                    setup_.listen.HostPort()));
  }
  return Status::Ok();
}

Status NginxProcess::Supervise(const LogSink& log) {
  Status health = Check();
  if (health.ok()) {
    unanswered_ = 0;
    return health;
  }
  // A master that runs but did not answer may be busy: three checks in a
  // row before it is restarted.
  if (pid_ > 0 && ++unanswered_ < 3) return Status::Ok();
  unanswered_ = 0;
  if (log) log("router: " + health.message() + "; restarting it");
  KillAll();
  MIGSERVE_RETURN_IF_ERROR(Launch());
  if (log) log(fmt::format("router: nginx restarted (pid {})", pid_));
  return Status::Ok();
}

Status NginxProcess::Apply(const ProxyConfig& config) {
  std::string live = ConfigPath();
  std::string next = live + ".next";
  MIGSERVE_RETURN_IF_ERROR(WriteOpenAiScript(config, setup_));
  MIGSERVE_RETURN_IF_ERROR(
      WriteFileAtomic(next, RenderNginxConfig(config, setup_)));
  std::string errors = setup_.prefix.str() + "/nginx-t.stderr";
  if (RunToEnd(
          {binary_, "-t", "-q", "-p", setup_.prefix.str() + "/", "-c", next},
          errors) != 0) {
    return Status::InvalidArgument(
        fmt::format("nginx -t refused generation {}:{}", config.generation,
                    LogTail(errors)));
  }
  std::error_code ec;
  std::filesystem::rename(next, live, ec);
  if (ec) {
    return Status::Unavailable(
        fmt::format("cannot replace {}: {}", live, ec.message()));
  }
  std::vector<pid_t> children = ChildrenOf(pid_);
  std::erase_if(lingering_, [&](pid_t old) {
    return std::find(children.begin(), children.end(), old) == children.end();
  });
  draining_.clear();
  for (pid_t child : children) {
    if (std::find(lingering_.begin(), lingering_.end(), child) ==
        lingering_.end()) {
      draining_.push_back(child);
    }
  }
  if (pid_ < 0 || kill(pid_, SIGHUP) != 0) {
    return Status::Unavailable(
        fmt::format("nginx (pid {}) is not running", pid_));
  }
  return Status::Ok();
}

int NginxProcess::ListenPort() const { return setup_.listen.port(); }

std::string NginxProcess::ListenHost() const {
  const std::string& host = setup_.listen.host();
  return host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host;
}

Status NginxProcess::ApplyAndDrain(const ProxyConfig& config) {
  MIGSERVE_RETURN_IF_ERROR(Apply(config));
  MIGSERVE_RETURN_IF_ERROR(WaitForGeneration(ListenHost(), ListenPort(),
                                             config.generation, 10,
                                             setup_.instance.str()));
  const bool streams = NeedsOpenAiScript(config);
  double timeout_s = setup_.drain_timeout.value() + (streams ? 0 : 5);
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
  if (streams) {
    lingering_.insert(lingering_.end(), draining_.begin(), draining_.end());
    draining_.clear();
    return Status::Ok();
  }
  return Status::DeadlineExceeded(
      fmt::format("nginx: {} old worker(s) still serve after {} s",
                  draining_.size(), timeout_s));
}

Status WriteOpenAiScript(
    const ProxyConfig& config, const NginxSetup& setup,
    std::vector<std::pair<std::string, std::string>> with) {
  if (NeedsOpenAiScript(config)) {
    std::error_code ec;
    if (!setup.prefix.str().empty())
      std::filesystem::create_directories(setup.prefix.str(), ec);
    with.emplace_back(OpenAiScriptPath(setup), OpenAiScript());
  }
  return WriteFilesAtomic(with);
}

Status WaitForGeneration(const std::string& host, int port, long generation,
                         double timeout_s, const std::string& instance) {
  httplib::Client client(host, port);
  client.set_connection_timeout(1);
  client.set_read_timeout(1);
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string seen = "nothing";
  for (;;) {
    if (auto res = client.Get("/migserve/generation");
        res && res->status == 200 &&
        (instance.empty() ||
         res->get_header_value("X-Migserve-Instance") == instance)) {
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
