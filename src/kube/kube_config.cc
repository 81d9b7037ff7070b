#include "kube/kube_config.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "boundary/input_file.h"
#include "boundary/yaml_map.h"

namespace migserve::kube {
namespace {

StatusOr<std::string> DecodeBase64(const std::string& text,
                                   const std::string& where) {
  std::string clean;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) clean += c;
  }
  if (clean.size() % 4 != 0) {
    return Status::InvalidArgument(where + ": not base64");
  }
  std::string out(clean.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()),
                          static_cast<int>(clean.size()));
  if (n < 0) return Status::InvalidArgument(where + ": not base64");
  size_t padding = 0;
  while (padding < clean.size() && clean[clean.size() - 1 - padding] == '=') {
    ++padding;
  }
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

// Returns the PEM of field `name` of `node`: `name`-data (base64) or the
// file `name` (relative to the kubeconfig's folder); empty if neither.
StatusOr<std::string> Pem(const YAML::Node& node, const std::string& name,
                          const std::string& where,
                          const std::filesystem::path& dir) {
  if (node[name + "-data"]) {
    return DecodeBase64(node[name + "-data"].as<std::string>(),
                        where + "." + name + "-data");
  }
  if (!node[name]) return std::string();
  std::filesystem::path file = node[name].as<std::string>();
  if (file.is_relative()) file = dir / file;
  auto text = ReadFile(file.string());
  if (!text.ok()) return text.status().WithPrefix(where + "." + name);
  return *text;
}

// Returns the entry of list `key` whose name is `name`, as `where`.
StatusOr<YAML::Node> Named(const YAML::Node& root, const std::string& key,
                           const std::string& name, const std::string& path) {
  for (const YAML::Node& entry : root[key]) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry;
  }
  return Status::InvalidArgument(
      fmt::format("{}: {}: no entry named \"{}\"", path, key, name));
}

void TrimRight(std::string* s) {
  while (!s->empty() && std::isspace(static_cast<unsigned char>(s->back()))) {
    s->pop_back();
  }
}

// Credentials migserve does not use are refused by name, never echoed: the
// auth-provider plugins client-go removed (exec replaced them), and basic
// auth, which Kubernetes removed.
Status RefuseUnsupportedCredentials(const YAML::Node& user,
                                    const std::string& where) {
  for (const char* key : {"auth-provider", "username", "password"}) {
    if (!user[key]) continue;
    return Status::InvalidArgument(fmt::format(
        "{}.{}: not supported (client-go removed auth-provider plugins, and "
        "migserve sends no password); use an exec credential plugin, a "
        "token, tokenFile or client certificate, e.g. from `kubectl create "
        "token SERVICE_ACCOUNT`",
        where, key));
  }
  return Status::Ok();
}

// The user's `exec` credential plugin, as client-go reads it: apiVersion
// and command required; a relative command with a '/' is the kubeconfig
// folder's.
StatusOr<ExecPlugin> ReadExecPlugin(const YAML::Node& exec,
                                    const std::string& where,
                                    const std::filesystem::path& dir,
                                    const KubeConfig& cluster) {
  ExecPlugin plugin;
  plugin.where = where;
  auto missing = [&](const char* key) {
    return Status::InvalidArgument(fmt::format(
        "{}.{}: missing (line {})", where, key, exec.Mark().line + 1));
  };
  if (!exec.IsMap())
    return Status::InvalidArgument(where + ": expected a mapping");
  for (const auto& field : exec) {
    const std::string key = field.first.as<std::string>();
    static const char* known[] = {
        "apiVersion",      "command",           "args", "env", "installHint",
        "interactiveMode", "provideClusterInfo"};
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
      return Status::InvalidArgument(
          fmt::format("{}.{}: unknown field (line {})", where, key,
                      field.first.Mark().line + 1));
    }
  }
  if (!exec["apiVersion"]) return missing("apiVersion");
  plugin.api_version = exec["apiVersion"].as<std::string>();
  if (plugin.api_version != "client.authentication.k8s.io/v1" &&
      plugin.api_version != "client.authentication.k8s.io/v1beta1") {
    return Status::InvalidArgument(
        fmt::format("{}.apiVersion: must be client.authentication.k8s.io/v1 or "
                    "v1beta1, got '{}'",
                    where, plugin.api_version));
  }
  if (!exec["command"]) return missing("command");
  plugin.command = exec["command"].as<std::string>();
  if (plugin.command.empty()) {
    return Status::InvalidArgument(where + ".command: empty");
  }
  if (plugin.command.find('/') != std::string::npos &&
      std::filesystem::path(plugin.command).is_relative()) {
    plugin.command = (dir / plugin.command).string();
  }
  if (exec["args"]) plugin.args = exec["args"].as<std::vector<std::string>>();
  if (exec["env"]) {
    for (const YAML::Node& var : exec["env"]) {
      if (!var["name"] || !var["value"]) {
        return Status::InvalidArgument(
            fmt::format("{}.env: each entry needs name and value (line {})",
                        where, var.Mark().line + 1));
      }
      plugin.env.emplace_back(var["name"].as<std::string>(),
                              var["value"].as<std::string>());
    }
  }
  if (exec["installHint"]) {
    plugin.install_hint = exec["installHint"].as<std::string>();
  }
  // v1 requires interactiveMode; v1beta1 defaults it to IfAvailable.
  if (exec["interactiveMode"]) {
    plugin.interactive_mode = exec["interactiveMode"].as<std::string>();
  } else if (plugin.api_version == "client.authentication.k8s.io/v1") {
    return missing("interactiveMode");
  }
  if (plugin.interactive_mode == "Always") {
    return Status::InvalidArgument(
        where +
        ".interactiveMode: Always needs a terminal, and migserve runs the "
        "plugin without one; use a plugin that can run with Never or "
        "IfAvailable, or a token");
  }
  if (plugin.interactive_mode != "Never" &&
      plugin.interactive_mode != "IfAvailable") {
    return Status::InvalidArgument(fmt::format(
        "{}.interactiveMode: must be Never, IfAvailable or Always, got '{}'",
        where, plugin.interactive_mode));
  }
  if (exec["provideClusterInfo"]) {
    plugin.provide_cluster_info = exec["provideClusterInfo"].as<bool>();
  }
  plugin.server = cluster.server;
  plugin.ca_pem = cluster.ca_pem;
  return plugin;
}

// Whether `url` has user information (scheme://user:password@host).
bool HasUserInfo(const std::string& url) {
  size_t scheme = url.find("://");
  size_t from = scheme == std::string::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", from);
  std::string authority = url.substr(
      from, end == std::string::npos ? std::string::npos : end - from);
  return authority.find('@') != std::string::npos;
}

// The config `root` (of file `path`) holds for `context`. yaml-cpp throws
// on a node of the wrong kind; the caller turns that into an error.
StatusOr<KubeConfig> FromYaml(const YAML::Node& root, const std::string& path,
                              const std::string& context) {
  std::string name = context;
  if (name.empty()) {
    if (!root["current-context"]) {
      return Status::InvalidArgument(path +
                                     ": current-context: missing (or pass "
                                     "--context)");
    }
    name = root["current-context"].as<std::string>();
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  KubeConfig config;
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node ctx,
                            Named(root, "contexts", name, path));
  YAML::Node c = ctx["context"];
  if (c["namespace"]) config.namespace_ = c["namespace"].as<std::string>();
  std::string cluster_name = c["cluster"] ? c["cluster"].as<std::string>() : "";
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node cluster,
                            Named(root, "clusters", cluster_name, path));
  std::string where =
      fmt::format("{}: clusters[{}].cluster", path, cluster_name);
  YAML::Node cl = cluster["cluster"];
  if (!cl["server"]) return Status::InvalidArgument(where + ".server: missing");
  config.server = cl["server"].as<std::string>();
  if (HasUserInfo(config.server)) {
    return Status::InvalidArgument(
        where +
        ".server: holds credentials (user:password@); give them as a token "
        "or a client certificate, never in the URL (not shown here)");
  }
  if (cl["insecure-skip-tls-verify"] &&
      cl["insecure-skip-tls-verify"].as<bool>()) {
    return Status::InvalidArgument(
        where +
        ".insecure-skip-tls-verify: migserve always verifies the server; "
        "give certificate-authority instead");
  }
  MIGSERVE_ASSIGN_OR_RETURN(config.ca_pem,
                            Pem(cl, "certificate-authority", where, dir));
  if (c["user"]) {
    std::string user_name = c["user"].as<std::string>();
    MIGSERVE_ASSIGN_OR_RETURN(YAML::Node user,
                              Named(root, "users", user_name, path));
    YAML::Node u = user["user"];
    std::string uwhere = fmt::format("{}: users[{}].user", path, user_name);
    MIGSERVE_RETURN_IF_ERROR(RefuseUnsupportedCredentials(u, uwhere));
    if (u["token"]) {
      config.token = u["token"].as<std::string>();
    } else if (u["tokenFile"]) {
      MIGSERVE_ASSIGN_OR_RETURN(config.token,
                                ReadFile(u["tokenFile"].as<std::string>()));
    }
    MIGSERVE_ASSIGN_OR_RETURN(config.cert_pem,
                              Pem(u, "client-certificate", uwhere, dir));
    MIGSERVE_ASSIGN_OR_RETURN(config.key_pem,
                              Pem(u, "client-key", uwhere, dir));
    if (u["exec"]) {
      MIGSERVE_ASSIGN_OR_RETURN(
          ExecPlugin plugin,
          ReadExecPlugin(u["exec"], uwhere + ".exec", dir, config));
      config.exec = std::make_shared<ExecCredentials>(std::move(plugin));
    }
  }
  TrimRight(&config.token);
  return config;
}

// The position of the first control character (below 0x20, or DEL) in
// `text`, or npos.
size_t ControlCharacter(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return i;
  }
  return std::string::npos;
}

// The host of `server` (scheme://host[:port][/...]), brackets kept.
std::string HostOf(const std::string& server) {
  size_t begin = server.find("://");
  begin = begin == std::string::npos ? 0 : begin + 3;
  size_t end = server[begin] == '[' ? server.find(']', begin) + 1
                                    : server.find_first_of(":/", begin);
  return server.substr(begin, end == std::string::npos || end == 0
                                  ? std::string::npos
                                  : end - begin);
}

}  // namespace

Status CheckTransport(const KubeConfig& config) {
  if (size_t i = ControlCharacter(config.token); i != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "the bearer token has a control character (0x{:02x} at byte {}); "
        "it would inject request headers",
        static_cast<unsigned char>(config.token[i]), i));
  }
  if (ControlCharacter(config.server) != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("server '{}' has a control character", config.server));
  }
  if (config.server.rfind("https://", 0) == 0) return Status::Ok();
  if (config.server.rfind("http://", 0) != 0) {
    return Status::InvalidArgument(fmt::format(
        "server '{}': only https:// API servers are supported", config.server));
  }
  // A credential plugin's token is a bearer token too.
  if (config.token.empty() && !config.exec) return Status::Ok();
  std::string host = HostOf(config.server);
  bool loopback = host == "127.0.0.1" || host == "[::1]" || host == "localhost";
  if (config.allow_loopback_http && loopback) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "server '{}': refusing to send the bearer token over plain http; use "
      "https{}",
      config.server,
      loopback ? " (or --insecure-loopback-http for a test server on this "
                 "machine)"
               : ""));
}

StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                    const std::string& context) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, path));
  try {
    if (!root.IsMap()) {
      return Status::InvalidArgument(path + ": expected a kubeconfig mapping");
    }
    return FromYaml(root, path, context);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
}

std::string DefaultKubeconfigPath() {
  std::error_code error;
  if (const char* list = std::getenv("KUBECONFIG"); list && *list) {
    std::stringstream in(list);
    for (std::string path; std::getline(in, path, ':');) {
      if (!path.empty() && std::filesystem::is_regular_file(path, error)) {
        return path;
      }
    }
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    std::string path = std::string(home) + "/.kube/config";
    if (std::filesystem::is_regular_file(path, error)) return path;
  }
  return "";
}

StatusOr<KubeConfig> InClusterConfig(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return Status::InvalidArgument(
        "not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset): pass "
        "--kubeconfig");
  }
  KubeConfig config;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  config.server = fmt::format("https://{}:{}", h, port);
  MIGSERVE_ASSIGN_OR_RETURN(config.token, ReadFile(account_dir + "/token"));
  MIGSERVE_ASSIGN_OR_RETURN(config.ca_pem, ReadFile(account_dir + "/ca.crt"));
  auto ns = ReadFile(account_dir + "/namespace");
  if (ns.ok()) config.namespace_ = *ns;
  TrimRight(&config.token);
  TrimRight(&config.namespace_);
  return config;
}

}  // namespace migserve::kube
