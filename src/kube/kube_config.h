// Where the Kubernetes API server is and how to prove who we are: from a
// kubeconfig file (its current context, or a named one) or from the
// in-cluster service account. TLS verification is always on: the CA comes
// from the config, or the system's store if the config names none.
#ifndef MIGSERVE_KUBE_KUBE_CONFIG_H_
#define MIGSERVE_KUBE_KUBE_CONFIG_H_

#include <memory>
#include <string>

#include "kube/exec_credential.h"
#include "util/status_or.h"

namespace migserve::kube {

struct KubeConfig {
  std::string server;    // https://host:port (see CheckTransport)
  std::string ca_pem;    // CA bundle (PEM), empty: the system store
  std::string token;     // bearer token, empty: none
  std::string cert_pem;  // client certificate (PEM), empty: none
  std::string key_pem;   // client key (PEM)
  std::string namespace_ = "default";
  // The user's credential plugin (user.exec), whose credential the client
  // sends in place of the three above; shared by every copy of the config,
  // so that the plugin runs once for all of them. Null: none.
  std::shared_ptr<ExecCredentials> exec;
  // Lets a bearer token go over plain http:// to a server on this machine
  // (127.0.0.1, ::1 or localhost): test servers only
  // (--insecure-loopback-http).
  bool allow_loopback_http = false;
};

// Checks that `config` keeps its credentials safe: the server is https://
// (or http:// without a token, or with one only to a loopback server when
// allow_loopback_http), no other scheme (file://, ...), and no control
// character in the token, which would inject headers into every request.
// InvalidArgument says which and how to fix it.
Status CheckTransport(const KubeConfig& config);

// Reads `path` (kubeconfig YAML). `context` empty: current-context.
// Certificate and key fields may be files or base64 "-data"; a user's
// `exec` plugin (client.authentication.k8s.io/v1 or v1beta1) is run when
// the first request needs its credential (exec_credential.h). Returns
// InvalidArgument naming the file and field for what is missing or bad,
// and for insecure-skip-tls-verify (migserve always verifies).
StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                    const std::string& context = "");

// The kubeconfig file kubectl would read when none is named: the first
// file of $KUBECONFIG (a list separated by ':') that exists, else
// ~/.kube/config if it exists, else "" (then the in-cluster config
// applies). kubectl merges every file of $KUBECONFIG; migserve reads only
// the first that exists, which must hold the context.
std::string DefaultKubeconfigPath();

// The in-cluster config: KUBERNETES_SERVICE_HOST and _PORT, the service
// account's token, CA and namespace under `account_dir`.
StatusOr<KubeConfig> InClusterConfig(
    const std::string& account_dir =
        "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_KUBE_CONFIG_H_
