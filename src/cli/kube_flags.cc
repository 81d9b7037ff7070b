#include "cli/kube_flags.h"

namespace migserve::cli {

void AddKubeOptions(CLI::App* app, KubeFlags* flags) {
  app->add_option("--kubeconfig", flags->kubeconfig,
                  "Kubeconfig file (default, as kubectl: the first file of "
                  "$KUBECONFIG that exists, else ~/.kube/config, else the "
                  "in-cluster service account)");
  app->add_option("--context", flags->context,
                  "Kubeconfig context (default: its current-context)");
  app->add_flag("--insecure-loopback-http", flags->loopback_http,
                "Allow sending the bearer token over plain http:// to a "
                "server on this machine (127.0.0.1, ::1, localhost): test "
                "servers only");
}

StatusOr<kube::KubeConfig> LoadKube(const KubeFlags& flags) {
  std::string path = flags.kubeconfig.empty() ? kube::DefaultKubeconfigPath()
                                              : flags.kubeconfig;
  StatusOr<kube::KubeConfig> config =
      path.empty() ? kube::InClusterConfig()
                   : kube::LoadKubeconfig(path, flags.context);
  if (!config.ok()) return config;
  config->allow_loopback_http = flags.loopback_http;
  if (Status safe = kube::CheckTransport(*config); !safe.ok()) {
    return safe.WithPrefix(path.empty() ? "in-cluster config" : path);
  }
  return config;
}

}  // namespace migserve::cli
