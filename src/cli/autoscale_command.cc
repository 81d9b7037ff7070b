// migserve autoscale (-w W | --workload-resource NAME) -p P --prometheus URL
//   (--target T.json | --target-resource NAME | --target-configmap NAME)
//   [--namespace NS]
//   [--state FILE]
//   [policy flags] [--step S] [--rate-window D] [--service-label L]
//   [--dry-run] [--pause-file F] [--once] [--metrics-port N]
//   [--inventory FILE] [--max-gpus N]
//   [--events-for KIND/NAME [kube flags]]
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "autoscale/following.h"
#include "autoscale/kubernetes/kubernetes_wiring.h"
#include "boundary/number.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cli/kube_flags.h"
#include "cli/policy_flags.h"
#include "cluster/inventory.h"
#include "kube/kube_client.h"
#include "profile/profile_csv.h"
#include "util/interrupt.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct AutoscaleFlags {
  std::string workload;
  std::string workload_resource;
  std::string profiles;
  bool once = false;
  std::string target;
  std::string target_resource;
  std::string target_configmap;
  std::string state;
  std::string namespace_;
  std::string events_for;
  std::string inventory;
  bool max_gpus_given = false;
  KubeFlags kube;
  autoscale::AutoscaleOptions options;
};

// The GPU budget of an inventory: its GPUs of the workload's model, which
// an explicit --max-gpus may lower but not raise.
Status BudgetFromInventory(const AutoscaleFlags& flags,
                           const workload::Workload& workload,
                           autoscale::AutoscaleOptions* options) {
  MIGSERVE_ASSIGN_OR_RETURN(cluster::Inventory inventory,
                            cluster::LoadInventory(flags.inventory));
  int gpus = 0;
  for (const cluster::InventoryNode& node : inventory.nodes) {
    if (node.model->name == workload.gpu) gpus += node.gpus;
  }
  if (gpus == 0) {
    return Status::InvalidArgument(
        fmt::format("--inventory: {} has no {} GPU (the workload's)",
                    flags.inventory, workload.gpu));
  }
  if (!flags.max_gpus_given) {
    options->max_gpus = gpus;
    options->log(fmt::format(
        "autoscale: a GPU budget of {} GPUs, the {} GPUs of --inventory {}",
        gpus, workload.gpu, flags.inventory));
  } else if (options->max_gpus == 0 || options->max_gpus > gpus) {
    return Status::InvalidArgument(fmt::format(
        "--max-gpus: {} is more than the {} {} GPUs of --inventory {}",
        options->max_gpus == 0 ? "no budget"
                               : std::to_string(options->max_gpus),
        gpus, workload.gpu, flags.inventory));
  }
  return Status::Ok();
}

Status RunAutoscale(const AutoscaleFlags& flags, CommandContext* context) {
  if (flags.workload.empty() == flags.workload_resource.empty()) {
    return Status::InvalidArgument(
        "give the workload: -w FILE or --workload-resource NAME (one of "
        "them)");
  }
  if (!flags.target.empty() + !flags.target_resource.empty() +
          !flags.target_configmap.empty() !=
      1) {
    return Status::InvalidArgument(
        "give the target deployment the controller follows: --target FILE, "
        "--target-resource NAME or --target-configmap NAME (one of them)");
  }
  MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable profiles,
                            profile::LoadProfileCsv(flags.profiles));
  autoscale::AutoscaleOptions options = flags.options;
  options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  options.sizer.solve.progress = nullptr;
  options.target = autoscale::FileTarget(flags.target);
  if (!flags.state.empty()) options.state = autoscale::FileTarget(flags.state);
  std::unique_ptr<autoscale::KubernetesWiring> kubernetes;
  if (!flags.target_resource.empty() || !flags.target_configmap.empty() ||
      !flags.events_for.empty() || !flags.workload_resource.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
    MIGSERVE_ASSIGN_OR_RETURN(
        kubernetes,
        autoscale::KubernetesWiring::Wire(
            std::move(config),
            {flags.namespace_, flags.target_resource, flags.target_configmap,
             flags.state.empty(), flags.events_for, flags.workload_resource},
            options.log, &options));
  }
  std::optional<autoscale::WorkloadSource> follow;
  autoscale::FollowedWorkload first;
  if (kubernetes) follow = kubernetes->Workload();
  if (follow) {
    MIGSERVE_ASSIGN_OR_RETURN(first, autoscale::ReadWorkloadSource(*follow));
  } else {
    MIGSERVE_ASSIGN_OR_RETURN(workload::Workload workload,
                              workload::LoadWorkload(flags.workload));
    first.workload =
        std::make_shared<const workload::Workload>(std::move(workload));
  }
  WarnMeasurementGaps(*first.workload, profiles, context->err);
  if (!flags.inventory.empty()) {
    MIGSERVE_RETURN_IF_ERROR(
        BudgetFromInventory(flags, *first.workload, &options));
  }
  InstallInterruptHandlers();
  return autoscale::RunAutoscaler(std::move(first), follow, profiles,
                                  std::move(options), flags.once,
                                  InterruptFlag());
}

// The options that tune how the autoscaler observes and moves.
void AddAutoscaleTuning(CLI::App* app, autoscale::AutoscaleOptions* o) {
  app->add_option("--p99-near", o->policy.p99_near,
                  "Move up at once when a service's observed p99 exceeds this "
                  "x its SLO")
      ->capture_default_str();
  app->add_option("--margin-floor", o->policy.margin_floor,
                  "A p99 over the SLO under a service's credits takes its "
                  "credits to the rate it received, never below this share "
                  "of them (1: never)")
      ->capture_default_str();
  app->add_option("--step", o->observe.step_s,
                  "Seconds between the window's observations (query_range "
                  "step)")
      ->capture_default_str();
  app->add_option("--rate-window", o->observe.rate_window,
                  "Range of rate() in the default rate query (PromQL "
                  "duration)")
      ->capture_default_str();
  app->add_option("--service-label", o->observe.service_label,
                  "Label carrying the service's name on its replicas' series")
      ->capture_default_str();
  app->add_option("--move-nodes", o->sizer.move_nodes,
                  "The work limit of a move's transition-aware milp runs, "
                  "CBC nodes (the same observations give the same target "
                  "on any machine)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--move-time-limit", o->sizer.move_time_limit_s,
                  "Seconds per transition-aware milp run of a move, a "
                  "safety net past --move-nodes")
      ->capture_default_str();
  app->add_option("--max-gpus", o->max_gpus,
                  "GPU budget: no move whose target or transition (the GPUs "
                  "it holds while it runs) needs more (0: none)")
      ->capture_default_str()
      ->check(Between(0, kMaxGpus));
  app->add_option("--gpus-per-node", o->sizer.gpus_per_node,
                  "GPUs per node for GPUs the target puts on no node")
      ->capture_default_str();
}

// What it reads (the workload, the profiles) and what it writes (the
// target, the policy's state), and where.
void AddSourcesAndTargets(CLI::App* app, AutoscaleFlags* flags) {
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->get_option("--workload")
      ->required(false)
      ->description("Workload YAML, read once (or --workload-resource)");
  app->add_option("--workload-resource", flags->workload_resource,
                  "Or the ServingWorkload (in --namespace) whose spec is the "
                  "workload: read every round, a new generation followed "
                  "once it parses, every target written saying which "
                  "(summary.workload)");
  app->add_option("--target", flags->target,
                  "Target deployment JSON file the controller follows "
                  "(controller --target): read as the current deployment, "
                  "rewritten on each move");
  app->add_option("--target-resource", flags->target_resource,
                  "Or the ServingTarget the controller follows (controller "
                  "--target-resource): its spec written only if unchanged "
                  "since read");
  app->add_option("--target-configmap", flags->target_configmap,
                  "Deprecated: the ConfigMap the controller follows "
                  "(controller --target-configmap; key deployment.json), "
                  "written only if unchanged since read");
  app->add_option("--state", flags->state,
                  "File that keeps the policy's state across restarts "
                  "(cool-downs under way, learned margins); by default the "
                  "--target-resource's annotation " +
                      std::string(autoscale::kStateAnnotation) +
                      " or the --target-configmap's key " +
                      std::string(autoscale::kStateKey));
  app->add_option("--namespace", flags->namespace_,
                  "Namespace of the target, the workload resource and the "
                  "events (default: the kubeconfig's)");
}

}  // namespace

void SetupAutoscale(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<AutoscaleFlags>();
  autoscale::AutoscaleOptions& o = flags->options;
  AddSourcesAndTargets(app, flags.get());
  app->add_option("--prometheus", o.prometheus,
                  "Prometheus server: http://host:port[/prefix]")
      ->required();
  AddPolicyOptions(app, &o.policy);
  AddAutoscaleTuning(app, &o);
  app->add_flag("--dry-run", o.dry_run,
                "Decide and say what would move; write nothing");
  app->add_option("--pause-file", o.pause_file,
                  "While this file exists, observe but decide nothing");
  app->add_flag("--once", flags->once,
                "One round (observe, decide, move), then exit: its error, if "
                "any");
  app->add_option("--metrics-address", o.metrics_address,
                  "Address of /metrics and /healthz")
      ->capture_default_str();
  app->add_option("--metrics-port", o.metrics_port,
                  "Port of /metrics and /healthz (0: any free; -1: none)")
      ->capture_default_str();
  app->add_option("--events-for", flags->events_for,
                  "Record each decision and problem as a Kubernetes Event "
                  "about this object (KIND/NAME: ConfigMap, Deployment, "
                  "Lease or Pod, e.g. Deployment/migserve-autoscale), in "
                  "--namespace");
  app->add_option("--inventory", flags->inventory,
                  "The fleet's inventory (YAML, as plan --inventory): the GPU "
                  "budget defaults to its GPUs of the workload's model");
  AddKubeOptions(app, &flags->kube);
  OnRun(app, context, [flags, context, app] {
    flags->max_gpus_given = app->count("--max-gpus") > 0;
    return RunAutoscale(*flags, context);
  });
}

}  // namespace migserve::cli
