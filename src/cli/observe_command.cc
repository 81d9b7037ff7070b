// migserve observe [--kubeconfig F] [--context C] [--namespace NS]
//     [--partitioner agent|dra] [-o F]
// Writes the cluster as the controller sees it (nodes, GPUs with their
// model, layouts from the agents' reports, replicas from Ready pods) as a
// placed deployment, for `plan --from`. Reads only.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/kube_flags.h"
#include "deployment/deployment_json.h"
#include "kubernetes/kubernetes_backend.h"
#include "kubernetes/partition/partitioner.h"

namespace migserve::cli {
namespace {

namespace k8s = kubernetes;

struct ObserveFlags {
  KubeFlags kube;
  std::string namespace_;
  std::string output;
  k8s::BackendOptions backend;
  k8s::Partitioner partitioner = k8s::Partitioner::kAgent;
};

Status RunObserve(ObserveFlags flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  if (!flags.namespace_.empty()) config.namespace_ = flags.namespace_;
  kube::KubeClient client(config);
  flags.backend.namespace_ = config.namespace_;
  flags.backend.warn = [context](const std::string& line) {
    context->err << "observe: warning: " << line << "\n";
  };
  k8s::DriverOptions driver;
  driver.namespace_ = config.namespace_;
  MIGSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<k8s::PartitionDriver> partition,
      k8s::MakePartitionDriver(flags.partitioner, &client, driver));
  flags.backend.partition = partition.get();
  k8s::KubernetesBackend backend(&client, flags.backend);
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState state, backend.Observe());
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<workload::Service> services,
                            cluster::ObservedServices(state));
  deployment::Deployment observed = cluster::ToDeployment(state, services);
  context->err << fmt::format("observe: {} GPUs, {} serving, {} services\n",
                              observed.gpus.size(), observed.UsedGpus(),
                              observed.services.size());
  return context->Emit(flags.output, deployment::FormatDeployment(observed));
}

}  // namespace

void SetupObserve(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ObserveFlags>();
  AddKubeOptions(app, &flags->kube);
  app->add_option("--namespace", flags->namespace_,
                  "Namespace of the replica pods (default: the kubeconfig's "
                  "or the service account's)");
  app->add_option("--node-selector", flags->backend.node_selector,
                  "Label selector of the MIG nodes")
      ->capture_default_str();
  app->add_option("--partitioner", flags->partitioner,
                  "Who partitions the GPUs, whose reports give the layouts: "
                  "agent (migserve's node agent) or dra (NVIDIA's DRA "
                  "driver's claims)")
      ->transform(OneOf<k8s::Partitioner>(k8s::PartitionerNames(true)))
      ->default_str("agent");
  app->add_option("-o,--output", flags->output,
                  "Write the observed deployment here (default: stdout)");
  OnRun(app, context, [flags, context] { return RunObserve(*flags, context); });
}

}  // namespace migserve::cli
