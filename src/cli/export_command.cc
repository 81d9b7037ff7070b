// migserve export -d D [--flavor device-plugin|dra] -o DIR
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "cli/command.h"
#include "cluster/kubernetes/export.h"
#include "deployment/deployment_json.h"
#include "util/file.h"

namespace migserve::cli {
namespace {

namespace k8s = cluster::kubernetes;

struct ExportFlags {
  std::string deployment;
  std::string output;
  k8s::Flavor flavor = k8s::Flavor::kDevicePlugin;
  k8s::ExportOptions options;
  int gpus_per_node = 8;
};

Status RunExport(const ExportFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                            deployment::LoadDeployment(flags.deployment));
  MIGSERVE_ASSIGN_OR_RETURN(
      cluster::ClusterState state,
      cluster::ClusterFromDeployment(d, {flags.gpus_per_node, 0}));
  if (state.Mixed() && !d.Placed()) {
    return Status::InvalidArgument(fmt::format(
        "{}: its GPUs are of several models but not all are placed on "
        "nodes; place it on your fleet first (migserve place -d {} "
        "--inventory FILE)",
        flags.deployment, flags.deployment));
  }
  k8s::ExportOptions options = flags.options;
  options.flavor = flags.flavor;
  auto files = k8s::Export(state, options);
  if (!files.ok()) return files.status().WithPrefix(flags.deployment);
  std::error_code error;
  std::filesystem::create_directories(flags.output, error);
  if (error) {
    return Status::InvalidArgument(
        fmt::format("{}: cannot create: {}", flags.output, error.message()));
  }
  for (auto [name, text] : {std::pair{"mig-parted.yaml", &files->mig_parted},
                            std::pair{"replicas.yaml", &files->replicas}}) {
    std::string path = (std::filesystem::path(flags.output) / name).string();
    MIGSERVE_RETURN_IF_ERROR(WriteFileAtomic(path, *text));
    context->err << "export: wrote " << path << "\n";
  }
  return Status::Ok();
}

}  // namespace

void SetupExport(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ExportFlags>();
  app->add_option("-d,--deployment", flags->deployment,
                  "Placed deployment JSON (`migserve place`; GPUs without a "
                  "node go on node-<id / gpus-per-node>)")
      ->required();
  app->add_option("-o,--output", flags->output,
                  "Directory for mig-parted.yaml and replicas.yaml")
      ->required();
  app->add_option("--flavor", flags->flavor,
                  "device-plugin (nvidia.com/mig-<profile> requests) or dra "
                  "(ResourceClaims for NVIDIA's DRA driver)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, k8s::Flavor>{
              {"device-plugin", k8s::Flavor::kDevicePlugin},
              {"dra", k8s::Flavor::kDra}},
          CLI::ignore_case))
      ->default_str("device-plugin");
  app->add_option("--image", flags->options.serving.image,
                  "Serving container image")
      ->capture_default_str();
  app->add_option("--port", flags->options.serving.port,
                  "The container's HTTP port (readiness: /v2/health/ready)")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app->add_option("--gpus-per-node", flags->gpus_per_node,
                  "GPUs per node for GPUs the deployment puts on no node")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app->callback([flags, context] {
    Status s = RunExport(*flags, context);
    if (!s.ok()) context->Fail(s);
  });
}

}  // namespace migserve::cli
