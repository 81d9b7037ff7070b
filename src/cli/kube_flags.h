// The flags that say how `controller`, `agent` and `observe` reach the
// Kubernetes API server: a kubeconfig (and context), else kubectl's default
// ($KUBECONFIG, ~/.kube/config), else the in-cluster service account.
#ifndef MIGSERVE_CLI_KUBE_FLAGS_H_
#define MIGSERVE_CLI_KUBE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "kube/kube_config.h"

namespace migserve::cli {

struct KubeFlags {
  std::string kubeconfig;
  std::string context;
  bool loopback_http = false;  // --insecure-loopback-http
};

void AddKubeOptions(CLI::App* app, KubeFlags* flags);

// The kubeconfig if one is given, else kubectl's default one, else the
// in-cluster config; refused (naming the file) if CheckTransport refuses it.
StatusOr<kube::KubeConfig> LoadKube(const KubeFlags& flags);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_KUBE_FLAGS_H_
