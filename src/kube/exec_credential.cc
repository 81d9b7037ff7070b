#include "kube/exec_credential.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"

extern char** environ;

namespace migserve::kube {
namespace {

using Clock = std::chrono::system_clock;

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// An RFC 3339 time as Kubernetes writes one (2026-12-07T05:00:00Z, with or
// without fractions of a second, Z or an offset).
std::optional<Clock::time_point> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year,
                  &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
                  &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    while (at < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[at]))) {
      ++at;
    }
  }
  long offset_s = 0;
  std::string zone = text.substr(at);
  if (zone != "Z" && zone != "z") {
    int hours = 0, minutes = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') ||
        std::sscanf(zone.c_str() + 1, "%2d:%2d", &hours, &minutes) != 2) {
      return std::nullopt;
    }
    offset_s = (zone[0] == '-' ? -1 : 1) * (hours * 3600L + minutes * 60L);
  }
  time_t seconds = timegm(&tm);
  if (seconds == static_cast<time_t>(-1)) return std::nullopt;
  return Clock::from_time_t(seconds - offset_s);
}

bool HasControlCharacter(const std::string& text) {
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// KUBERNETES_EXEC_INFO: what the plugin is asked for, and (where the
// kubeconfig says so) the cluster it is for.
std::string ExecInfo(const ExecPlugin& plugin) {
  nlohmann::json spec = {{"interactive", false}};
  if (plugin.provide_cluster_info) {
    nlohmann::json cluster = {{"server", plugin.server}};
    if (!plugin.ca_pem.empty()) {
      cluster["certificate-authority-data"] = Base64(plugin.ca_pem);
    }
    spec["cluster"] = cluster;
  }
  return nlohmann::json({{"apiVersion", plugin.api_version},
                         {"kind", "ExecCredential"},
                         {"spec", spec}})
      .dump();
}

// The environment the plugin runs in: ours, its kubeconfig's over it, and
// KUBERNETES_EXEC_INFO.
std::vector<std::string> Environment(const ExecPlugin& plugin) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  auto set = [&](const std::string& name, const std::string& value) {
    if (!vars.count(name)) order.push_back(name);
    vars[name] = value;
  };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) set(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const auto& [name, value] : plugin.env) set(name, value);
  set("KUBERNETES_EXEC_INFO", ExecInfo(plugin));
  std::vector<std::string> out;
  for (const std::string& name : order) out.push_back(name + "=" + vars[name]);
  return out;
}

}  // namespace

StatusOr<Credential> ParseExecCredential(const std::string& text,
                                         const std::string& api_version,
                                         const std::string& where) {
  // JsonFields keeps a reference to its source: a named string, not a
  // temporary.
  const std::string source = where + ": the plugin's ExecCredential";
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  std::string version, kind;
  MIGSERVE_RETURN_IF_ERROR(f.Get("apiVersion", true, &version));
  MIGSERVE_RETURN_IF_ERROR(f.Get("kind", true, &kind));
  if (version != api_version) {
    return f.Error("apiVersion", fmt::format("is {}, but {} was asked", version,
                                             api_version));
  }
  if (kind != "ExecCredential") {
    return f.Error("kind", "must be ExecCredential, got " + kind);
  }
  MIGSERVE_ASSIGN_OR_RETURN(const nlohmann::json* status, f.Object("status"));
  JsonFields s(*status, f.source(), "status");
  Credential out;
  MIGSERVE_RETURN_IF_ERROR(s.Get("token", false, &out.token));
  std::string cert, key;
  MIGSERVE_RETURN_IF_ERROR(s.Get("clientCertificateData", false, &cert));
  MIGSERVE_RETURN_IF_ERROR(s.Get("clientKeyData", false, &key));
  if (HasControlCharacter(out.token)) {
    return s.Error("token",
                   "has a control character; it would inject request headers");
  }
  if (cert.empty() != key.empty()) {
    return s.Error(cert.empty() ? "clientCertificateData" : "clientKeyData",
                   "missing: a client certificate needs its key");
  }
  if (out.token.empty() && cert.empty()) {
    return s.Error("token",
                   "missing: the plugin gave neither a token nor a client "
                   "certificate and key");
  }
  out.cert_pem = cert;
  out.key_pem = key;
  std::string expires;
  MIGSERVE_RETURN_IF_ERROR(s.Get("expirationTimestamp", false, &expires));
  if (!expires.empty()) {
    out.expires = ParseRfc3339(expires);
    if (!out.expires) {
      return s.Error("expirationTimestamp",
                     "not an RFC 3339 time: '" + expires + "'");
    }
  }
  return out;
}

StatusOr<Credential> RunExecPlugin(const ExecPlugin& plugin) {
  const std::string who = fmt::format("{}: the credential plugin '{}'",
                                      plugin.where, plugin.command);
  std::vector<std::string> argv_text = {plugin.command};
  argv_text.insert(argv_text.end(), plugin.args.begin(), plugin.args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = Environment(plugin);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return Status::Unavailable(who + ": pipe: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, plugin.command.c_str(), &actions, nullptr,
                             argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return Status::Unavailable(fmt::format(
        "{} cannot run: {}{}", who, std::strerror(spawned),
        plugin.install_hint.empty() ? "" : "; " + plugin.install_hint));
  }
  std::string text;
  bool too_much = false, timed_out = false;
  auto until = std::chrono::steady_clock::now() +
               std::chrono::duration<double>(plugin.timeout_s);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > plugin.max_output) {
      too_much = true;
      break;
    }
  }
  close(out[0]);
  if (timed_out || too_much) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::Unavailable(
        fmt::format("{} ran past {} s; it was stopped", who, plugin.timeout_s));
  }
  if (too_much) {
    return Status::Unavailable(
        fmt::format("{} printed more than {} bytes; it was stopped", who,
                    plugin.max_output));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::Unavailable(fmt::format(
        "{} failed ({}){}", who,
        WIFEXITED(wstatus) ? fmt::format("exit status {}", WEXITSTATUS(wstatus))
                           : fmt::format("signal {}", WTERMSIG(wstatus)),
        WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127 &&
                !plugin.install_hint.empty()
            ? "; " + plugin.install_hint
            : ""));
  }
  return ParseExecCredential(text, plugin.api_version, plugin.where);
}

StatusOr<Credential> ExecCredentials::Run() {
  ++runs_;
  MIGSERVE_ASSIGN_OR_RETURN(Credential fresh, RunExecPlugin(plugin_));
  kept_ = fresh;
  return fresh;
}

StatusOr<Credential> ExecCredentials::Current() {
  MutexLock lock(&mu_);
  if (kept_ && (!kept_->expires ||
                Clock::now() + std::chrono::seconds(10) < *kept_->expires)) {
    return *kept_;
  }
  return Run();
}

StatusOr<Credential> ExecCredentials::Refresh(const Credential& refused) {
  MutexLock lock(&mu_);
  if (kept_ &&
      (kept_->token != refused.token || kept_->cert_pem != refused.cert_pem)) {
    return *kept_;
  }
  kept_.reset();
  return Run();
}

int ExecCredentials::runs() const {
  MutexLock lock(&mu_);
  return runs_;
}

}  // namespace migserve::kube
