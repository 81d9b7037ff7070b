// migserve doctor [--kubeconfig F] [--context C] [-d DEPLOYMENT]
//     [--partitioner gpu-operator|agent|dra]
// A preflight for whoever partitions the GPUs (docs/kubernetes.md,
// "Install on a GPU Operator cluster", "Choosing who partitions the GPUs"),
// one line per check ("ok: ..." or "problem: ..."). gpu-operator (the
// default): the nodes, the ClusterPolicy and the MIG manager, and with -d
// that each node's nvidia.com/mig.config label names the config `export
// --flavor gpu-operator` wrote for it; dra with -d, that the driver's
// ResourceSlices offer a device for every instance it places. Every
// partitioner: the nodes whose
// GPUs NVIDIA's DRA driver partitions (DynamicMIG), a conflict for the
// agent and the MIG manager, and for dra the driver, its partitionable
// devices and its DeviceClass. Exit 0 when nothing is wrong, 1 otherwise.
// Reads only.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/kube_flags.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "kubernetes/export.h"
#include "kubernetes/partition/dra_check.h"
#include "kubernetes/partition/gpu_operator_check.h"

namespace migserve::cli {
namespace {

namespace k8s = kubernetes;

struct DoctorFlags {
  KubeFlags kube;
  std::string deployment;
  k8s::Partitioner partitioner = k8s::Partitioner::kGpuOperator;
};

Status RunDoctor(const DoctorFlags& flags, CommandContext* context) {
  std::map<std::string, std::string> configs;
  std::optional<cluster::ClusterState> state;
  if (!flags.deployment.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                              deployment::LoadDeployment(flags.deployment));
    MIGSERVE_ASSIGN_OR_RETURN(state, cluster::ClusterFromDeployment(d, {}));
    configs = k8s::MigManagerConfigOfNodes(*state);
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  kube::KubeClient client(config);
  std::vector<k8s::Finding> findings;
  if (flags.partitioner == k8s::Partitioner::kGpuOperator) {
    MIGSERVE_ASSIGN_OR_RETURN(findings,
                              k8s::CheckGpuOperator(&client, configs));
  }
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<k8s::Finding> dra,
                            k8s::CheckDra(&client, flags.partitioner));
  findings.insert(findings.end(), dra.begin(), dra.end());
  if (state && flags.partitioner == k8s::Partitioner::kDra) {
    MIGSERVE_ASSIGN_OR_RETURN(k8s::Finding offers,
                              k8s::CheckDraOffers(&client, *state));
    findings.push_back(std::move(offers));
  }
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
                  "the config export wrote for this deployment "
                  "(gpu-operator), or that the DRA driver's slices offer a "
                  "device for each of its instances (dra)");
  app->add_option("--partitioner", flags->partitioner,
                  "Who partitions the GPUs: gpu-operator (its MIG manager), "
                  "agent (migserve's node agent) or dra (NVIDIA's DRA "
                  "driver, DynamicMIG)")
      ->transform(OneOf<k8s::Partitioner>(k8s::PartitionerNames(false)))
      ->default_str("gpu-operator");
  OnRun(app, context, [flags, context] { return RunDoctor(*flags, context); });
}

}  // namespace migserve::cli
