#include "cli/kube_flags.h"

#include <csignal>

namespace migserve::cli {
namespace {

std::atomic<bool> stop_requested = false;

extern "C" void OnSignal(int) { stop_requested = true; }

}  // namespace

void AddKubeOptions(CLI::App* app, KubeFlags* flags) {
  app->add_option("--kubeconfig", flags->kubeconfig,
                  "Kubeconfig file (default, as kubectl: the first file of "
                  "$KUBECONFIG that exists, else ~/.kube/config, else the "
                  "in-cluster service account)");
  app->add_option("--context", flags->context,
                  "Kubeconfig context (default: its current-context)");
}

StatusOr<cluster::kubernetes::KubeConfig> LoadKube(const KubeFlags& flags) {
  std::string path = flags.kubeconfig.empty()
                         ? cluster::kubernetes::DefaultKubeconfigPath()
                         : flags.kubeconfig;
  if (!path.empty()) {
    return cluster::kubernetes::LoadKubeconfig(path, flags.context);
  }
  return cluster::kubernetes::InClusterConfig();
}

const std::atomic<bool>& StopRequested() {
  static bool installed = [] {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    return true;
  }();
  (void)installed;
  return stop_requested;
}

}  // namespace migserve::cli
