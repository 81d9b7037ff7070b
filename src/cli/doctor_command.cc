// migserve doctor [--kubeconfig F] [--context C] [-d DEPLOYMENT]
// A preflight for a GPU Operator cluster (docs/kubernetes.md, "Install on a
// GPU Operator cluster"): reads the nodes, the ClusterPolicy and the MIG
// manager and says what will not work, one line per check ("ok: ..." or
// "problem: ..."). With -d it also checks that each node's
// nvidia.com/mig.config label names the config `export --flavor
// gpu-operator` wrote for it. Exit 0 when nothing is wrong, 1 otherwise.
// Reads only.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/kube_flags.h"
#include "cluster/cluster_state.h"
#include "cluster/kubernetes/export.h"
#include "cluster/kubernetes/partition/gpu_operator_check.h"
#include "deployment/deployment_json.h"

namespace migserve::cli {
namespace {

namespace k8s = cluster::kubernetes;

struct DoctorFlags {
  KubeFlags kube;
  std::string deployment;
};

Status RunDoctor(const DoctorFlags& flags, CommandContext* context) {
  std::map<std::string, std::string> configs;
  if (!flags.deployment.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                              deployment::LoadDeployment(flags.deployment));
    MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState state,
                              cluster::ClusterFromDeployment(d, {}));
    configs = k8s::MigManagerConfigOfNodes(state);
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  kube::KubeClient client(config);
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<k8s::Finding> findings,
                            k8s::CheckGpuOperator(&client, configs));
  int problems = 0;
  for (const k8s::Finding& f : findings) {
    context->out << (f.problem ? "problem: " : "ok: ") << f.text << "\n";
    problems += f.problem ? 1 : 0;
  }
  if (problems == 0) return Status::Ok();
  return Status::FailedPrecondition(
      fmt::format("doctor: {} problem{}", problems, problems == 1 ? "" : "s"));
}

}  // namespace

void SetupDoctor(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<DoctorFlags>();
  AddKubeOptions(app, &flags->kube);
  app->add_option("-d,--deployment", flags->deployment,
                  "Also check that each node's nvidia.com/mig.config names "
                  "the config export wrote for this deployment");
  OnRun(app, context, [flags, context] { return RunDoctor(*flags, context); });
}

}  // namespace migserve::cli
