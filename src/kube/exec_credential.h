// A kubeconfig user's credential plugin (`user.exec`), run as kubectl
// (client-go) runs one: the plugin a managed cluster's kubeconfig names
// (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`) prints an
// ExecCredential (client.authentication.k8s.io v1 or v1beta1) whose status
// holds a bearer token or a client certificate and key, valid until its
// expirationTimestamp. The credential is cached until then, and the plugin
// run again when the server answers 401.
#ifndef MIGSERVE_KUBE_EXEC_CREDENTIAL_H_
#define MIGSERVE_KUBE_EXEC_CREDENTIAL_H_

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve::kube {

// What proves who a client is: a bearer token, or a client certificate and
// its key (PEM); either may be empty.
struct Credential {
  std::string token;
  std::string cert_pem;
  std::string key_pem;
  // The plugin's expirationTimestamp; none: valid until refused.
  std::optional<std::chrono::system_clock::time_point> expires;
};

struct ExecPlugin {
  std::string where;  // "FILE: users[NAME].user.exec", for messages
  // client.authentication.k8s.io/v1 or /v1beta1: what the plugin is asked
  // for and must answer.
  std::string api_version;
  // As the kubeconfig gives it; a relative path with a '/' is taken from
  // the kubeconfig's folder, a bare name from $PATH.
  std::string command;
  std::vector<std::string> args;
  // Set for the plugin, over the environment it inherits.
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;  // said where the command cannot run
  // Never or IfAvailable (both run without a terminal here); Always is
  // refused when the kubeconfig is read, since no command of migserve
  // reads a terminal.
  std::string interactive_mode = "IfAvailable";
  // The cluster's server and CA in KUBERNETES_EXEC_INFO's spec.cluster.
  bool provide_cluster_info = false;
  std::string server;
  std::string ca_pem;
  // How long the plugin may run, and how much it may print.
  double timeout_s = 60;
  size_t max_output = 1 << 20;
};

// Runs `plugin` once (its stderr passed through, as kubectl does) and
// reads its ExecCredential. Unavailable naming plugin.where and the
// command where it cannot run, fails, outlasts its time or prints more
// than its bound; InvalidArgument where its answer is not an
// ExecCredential of the version asked with a token or a certificate and
// key (a token with a control character included).
StatusOr<Credential> RunExecPlugin(const ExecPlugin& plugin);

// Parses an ExecCredential printed by a plugin asked for `api_version`;
// errors begin with `where`.
StatusOr<Credential> ParseExecCredential(const std::string& text,
                                         const std::string& api_version,
                                         const std::string& where);

// The credential of one plugin, shared by every client of a kubeconfig:
// run once, then kept until its expiry (or a refusal).
class ExecCredentials {
 public:
  explicit ExecCredentials(ExecPlugin plugin) : plugin_(std::move(plugin)) {}

  // The credential to send now: the one kept while it has not expired
  // (10 s of margin), else a fresh one from the plugin.
  StatusOr<Credential> Current() EXCLUDES(mu_);
  // After the server refused `refused` (401): a fresh one from the plugin,
  // unless another request already replaced it.
  StatusOr<Credential> Refresh(const Credential& refused) EXCLUDES(mu_);

  const ExecPlugin& plugin() const { return plugin_; }
  // How many times the plugin ran.
  int runs() const EXCLUDES(mu_);

 private:
  StatusOr<Credential> Run() REQUIRES(mu_);

  const ExecPlugin plugin_;
  mutable Mutex mu_;
  std::optional<Credential> kept_ GUARDED_BY(mu_);
  int runs_ GUARDED_BY(mu_) = 0;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_EXEC_CREDENTIAL_H_
