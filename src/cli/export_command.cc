// migserve export -d D [-p P] [--flavor device-plugin|dra|gpu-operator]
//     [--serving F] -o DIR
#include <fmt/format.h>

#include <optional>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/serving_flags.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "kubernetes/export.h"
#include "profile/profile_csv.h"

namespace migserve::cli {
namespace {

namespace k8s = kubernetes;

struct ExportFlags {
  std::string deployment;
  std::string profiles;
  std::string output;
  k8s::Partitioner flavor = k8s::Partitioner::kAgent;
  std::string serving;
  std::string resource_slices;
  std::string image;
  int port = 0;
  int gpus_per_node = 8;
  int router_replicas = 2;
  // The proxy's image; empty: the serving spec's, else migserve:<version>.
  std::string proxy_image;
  std::string target_resource;  // set: target.yaml, a ServingTarget
};

// What to export `d` (as `state`) with: the flavour, the serving spec
// (with --image and --port on top, in
// deploy/'s namespace where it names none), the GPUs' UUIDs (checked
// against `state`) and the proxy where d's credits assume one.
StatusOr<k8s::ExportOptions> OptionsFor(const ExportFlags& flags,
                                        const deployment::Deployment& d,
                                        const cluster::ClusterState& state) {
  k8s::ExportOptions options;
  options.partitioner = flags.flavor;
  if (!flags.serving.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(options.serving,
                              k8s::LoadServingSpec(flags.serving));
  }
  for (const workload::Service& s : d.services) {
    if (s.min_replicas > 1) options.min_replicas[s.name] = s.min_replicas;
  }
  OverrideTemplate(flags.image, flags.port, &options.serving);
  options.serving.KindsFrom(d.services);
  if (!flags.resource_slices.empty()) {
    if (flags.flavor != k8s::Partitioner::kDra) {
      return Status::InvalidArgument(
          "--resource-slices: only the dra flavour pins GPUs by UUID");
    }
    MIGSERVE_ASSIGN_OR_RETURN(std::string text,
                              ReadFile(flags.resource_slices));
    MIGSERVE_ASSIGN_OR_RETURN(
        options.gpu_uuids,
        k8s::GpuUuidsOfSlices(text, flags.resource_slices, &state));
  }
  // Objects without a namespace would land in kubectl's, and a RoleBinding
  // cannot name its service account's.
  if (options.serving.namespace_.empty()) {
    options.serving.namespace_ = k8s::kReplicaNamespace;
  }
  // The proxy goes with a deployment whose credits assume it.
  if (d.Plane() == queueing::DataPlane::kProxy) {
    // The flag, else the serving spec's, else this version's.
    std::string image = !flags.proxy_image.empty() ? flags.proxy_image
                        : !options.serving.proxy_image.empty()
                            ? options.serving.proxy_image
                            : std::string("migserve:" MIGSERVE_VERSION);
    if (std::string wrong = WordProblem(image); !wrong.empty()) {
      return Status::InvalidArgument("--proxy-image: " + wrong);
    }
    options.proxy = k8s::ProxyExport{flags.router_replicas, image};
  }
  if (!flags.target_resource.empty()) {
    if (std::string wrong = ObjectNameProblem(flags.target_resource);
        !wrong.empty()) {
      return Status::InvalidArgument("--target-resource: " + wrong);
    }
    options.target = k8s::ExportOptions::Target{
        flags.target_resource,
        nlohmann::json::parse(deployment::FormatDeployment(d))};
  }
  return options;
}

// Tells stderr what export wrote and what the files need to work.
void SayWhatWasWritten(const ExportFlags& flags,
                       const k8s::ExportOptions& options,
                       const k8s::ExportedFiles& files,
                       const k8s::WrittenExport& written,
                       CommandContext* context) {
  for (const std::string& path : written.written) {
    context->err << "export: wrote " << path << "\n";
  }
  for (const std::string& path : written.removed) {
    context->err << "export: removed " << path << " of an earlier export\n";
  }
  if (flags.serving.empty() && flags.image.empty()) {
    context->err << "export: replicas.yaml: no --serving spec: each replica "
                    "runs Triton on the model repository /models, which the "
                    "pods do not mount; give a spec with your repository's "
                    "volume (examples/triton/serving.yaml, docs/serving.md)\n";
  }
  if (!files.dra_apply.empty()) {
    context->err << "export: dra-apply.sh creates the claims in the order "
                    "that lands each MIG instance at its planned start (sh "
                    "dra-apply.sh)"
                 << (options.gpu_uuids.empty()
                         ? "; without --resource-slices the claims pin the "
                           "profile, not the GPU"
                         : "")
                 << "\n";
  }
  if (!files.target.empty()) {
    context->err << "export: target.yaml: the ServingTarget "
                 << flags.target_resource
                 << " for a controller to follow (controller "
                    "--target-resource); where one runs, apply it instead of "
                    "replicas.yaml and the layouts: the controller makes "
                    "them\n";
  }
  if (!files.proxy.empty()) {
    context->err << "export: proxy.yaml: " << flags.router_replicas
                 << " proxies route each service to its replicas by credit "
                    "(router: proxy)\n";
    // A tag can move under a running proxy; a digest cannot (issue 90:
    // export wrote migserve:<version> without a word).
    if (options.proxy &&
        options.proxy->image.find("@sha256:") == std::string::npos) {
      context->err << "export: proxy.yaml: the proxy's image "
                   << options.proxy->image
                   << " is not pinned by digest; give --proxy-image "
                      "REGISTRY/migserve@sha256:... (the digest make image "
                      "wrote, build/image/digest)\n";
    }
  } else if (files.routing.empty()) {
    context->err << "export: no routing.yaml: "
                 << (flags.serving.empty() ? "no --serving spec"
                                           : flags.serving +
                                                 " names no "
                                                 "routing.gateway")
                 << "; replicas get no capacity-weighted route\n";
  }
}

Status RunExport(const ExportFlags& flags, CommandContext* context) {
  if (flags.output == "-") {
    return Status::InvalidArgument(
        "-o: export writes several files (mig-parted.yaml or "
        "mig-manager.yaml, replicas.yaml, "
        "routing.yaml, proxy.yaml, target.yaml), not one stream; name a "
        "directory");
  }
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                            deployment::LoadDeployment(flags.deployment));
  // Routes are weighted by each replica's declared throughput: one that
  // declares more than its row measured (the profiles given, else the
  // shipped ones) or an LLM replica past its slice's peaks is refused.
  std::optional<profile::ProfileTable> profiles;
  if (!flags.profiles.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(profiles,
                              profile::LoadProfileCsv(flags.profiles));
  }
  MIGSERVE_RETURN_IF_ERROR(
      deployment::CheckDeclaredCredits(d, profiles ? &*profiles : nullptr));
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
  MIGSERVE_ASSIGN_OR_RETURN(k8s::ExportOptions options,
                            OptionsFor(flags, d, state));
  std::vector<std::string> services;
  for (const workload::Service& s : d.services) services.push_back(s.name);
  for (const std::string& unused :
       options.serving.UnusedOverrides(services, flags.deployment)) {
    context->err << "export: " << unused
                 << ": its overrides apply to no replica here\n";
  }
  auto files = k8s::Export(state, options);
  if (!files.ok()) return files.status().WithPrefix(flags.deployment);
  MIGSERVE_ASSIGN_OR_RETURN(k8s::WrittenExport written,
                            k8s::WriteExport(*files, flags.output));
  SayWhatWasWritten(flags, options, *files, written, context);
  return Status::Ok();
}

}  // namespace

void SetupExport(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ExportFlags>();
  app->add_option("-d,--deployment", flags->deployment,
                  "Placed deployment JSON (`migserve place`; GPUs without a "
                  "node go on node-<id / gpus-per-node>)")
      ->required();
  app->add_option("-p,--profiles", flags->profiles,
                  "Profile CSV: refuse a replica that declares more "
                  "throughput than its row measured (routes are weighted by "
                  "what each declares)");
  app->add_option("-o,--output", flags->output,
                  "Directory for mig-parted.yaml (gpu-operator: "
                  "mig-manager.yaml), replicas.yaml, (with a gateway in "
                  "--serving) routing.yaml, (router: proxy) proxy.yaml and "
                  "(dra) dra-apply.sh and device-classes.yaml")
      ->required();
  app->add_option("--flavor", flags->flavor,
                  "device-plugin (nvidia.com/mig-<profile> requests), dra "
                  "(ResourceClaims for NVIDIA's DRA driver) or gpu-operator "
                  "(device-plugin requests, layouts as the GPU Operator's "
                  "MIG manager ConfigMap)")
      ->transform(OneOf<k8s::Partitioner>(k8s::FlavorNames()))
      ->default_str("device-plugin");
  AddServingOptions(app, &flags->serving, &flags->image, &flags->port);
  app->add_option("--target-resource", flags->target_resource,
                  "Also write target.yaml: the ServingTarget of this name "
                  "(migserve.io) whose spec is the deployment, for the "
                  "controller to follow (controller --target-resource)");
  app->add_option("--resource-slices", flags->resource_slices,
                  "dra: the cluster's ResourceSlices (kubectl get "
                  "resourceslices -o json), so that each claim pins its GPU "
                  "by UUID; without it claims pin the profile only")
      ->check(CLI::ExistingFile);
  app->add_option("--router-replicas", flags->router_replicas,
                  "Proxy instances in proxy.yaml (router: proxy); the "
                  "credits hold for at most the workload's router_replicas")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app->add_option("--proxy-image", flags->proxy_image,
                  "The proxy's image (migserve with nginx), as the install "
                  "pins the controller's: REGISTRY/migserve@sha256:... "
                  "(default: the serving spec's proxy.image, else "
                  "migserve:<this version>)");
  app->add_option("--gpus-per-node", flags->gpus_per_node,
                  "GPUs per node for GPUs the deployment puts on no node")
      ->capture_default_str()
      ->check(Positive());
  OnRun(app, context, [flags, context] { return RunExport(*flags, context); });
}

}  // namespace migserve::cli
