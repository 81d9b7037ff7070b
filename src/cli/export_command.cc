// migserve export -d D [--flavor device-plugin|dra] [--serving F] -o DIR
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/serving_flags.h"
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
  std::string serving;
  std::string image;
  int port = 0;
  int gpus_per_node = 8;
};

Status RunExport(const ExportFlags& flags, CommandContext* context) {
  if (flags.output == "-") {
    return Status::InvalidArgument(
        "-o: export writes several files (mig-parted.yaml, replicas.yaml, "
        "routing.yaml), not one stream; name a directory");
  }
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
  k8s::ExportOptions options;
  options.flavor = flags.flavor;
  if (!flags.serving.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(options.serving,
                              k8s::LoadServingSpec(flags.serving));
  }
  OverrideTemplate(flags.image, flags.port, &options.serving);
  auto files = k8s::Export(state, options);
  if (!files.ok()) return files.status().WithPrefix(flags.deployment);
  std::error_code error;
  std::filesystem::create_directories(flags.output, error);
  if (error) {
    return Status::InvalidArgument(
        fmt::format("{}: cannot create: {}", flags.output, error.message()));
  }
  // All files or none: a failed write leaves the previous export whole.
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::string> stale;
  for (auto [name, text] : {std::pair{"mig-parted.yaml", &files->mig_parted},
                            std::pair{"replicas.yaml", &files->replicas},
                            std::pair{"routing.yaml", &files->routing}}) {
    std::string path = (std::filesystem::path(flags.output) / name).string();
    if (!text->empty()) {
      out.emplace_back(path, *text);
    } else {
      stale.push_back(path);
    }
  }
  MIGSERVE_RETURN_IF_ERROR(WriteFilesAtomic(out));
  for (const auto& [path, text] : out) {
    context->err << "export: wrote " << path << "\n";
  }
  // A file an earlier export wrote and this one does not (a routing.yaml
  // would route to other replicas) goes, once the new ones are in place.
  for (const std::string& path : stale) {
    if (std::filesystem::remove(path, error)) {
      context->err << "export: removed " << path << " of an earlier export\n";
    }
  }
  if (files->routing.empty()) {
    context->err << "export: no routing.yaml: "
                 << (flags.serving.empty() ? "no --serving spec"
                                           : flags.serving +
                                                 " names no "
                                                 "routing.gateway")
                 << "; replicas get no capacity-weighted route\n";
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
                  "Directory for mig-parted.yaml, replicas.yaml and (with a "
                  "gateway in --serving) routing.yaml")
      ->required();
  app->add_option("--flavor", flags->flavor,
                  "device-plugin (nvidia.com/mig-<profile> requests) or dra "
                  "(ResourceClaims for NVIDIA's DRA driver)")
      ->transform(
          OneOf<k8s::Flavor>({{"device-plugin", k8s::Flavor::kDevicePlugin},
                              {"dra", k8s::Flavor::kDra}}))
      ->default_str("device-plugin");
  AddServingOptions(app, &flags->serving, &flags->image, &flags->port);
  app->add_option("--gpus-per-node", flags->gpus_per_node,
                  "GPUs per node for GPUs the deployment puts on no node")
      ->capture_default_str()
      ->check(Positive());
  app->callback([flags, context] {
    Status s = RunExport(*flags, context);
    if (!s.ok()) context->Fail(s);
  });
}

}  // namespace migserve::cli
