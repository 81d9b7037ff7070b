// migserve autoscale -w W -p P --prometheus URL
//   (--target T.json | --target-configmap NAME [--namespace NS])
//   [--state FILE]
//   [policy flags] [--step S] [--rate-window D] [--service-label L]
//   [--dry-run] [--pause-file F] [--once] [--metrics-port N]
//   [--events-for KIND/NAME [kube flags]]
#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>

#include "autoscale/autoscaler.h"
#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/kube_flags.h"
#include "cli/policy_flags.h"
#include "kube/configmap_key.h"
#include "kube/event_recorder.h"
#include "kube/kube_client.h"
#include "manager/target_source.h"
#include "profile/profile_csv.h"
#include "util/interrupt.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

// The key of --target-configmap that keeps the policy's state.
constexpr char kStateKey[] = "autoscale-state.json";

struct AutoscaleFlags {
  std::string workload;
  std::string profiles;
  bool once = false;
  std::string target;
  std::string target_configmap;
  std::string state;
  std::string namespace_;
  std::string events_for;
  KubeFlags kube;
  autoscale::AutoscaleOptions options;
};

// The object `--events-for KIND/NAME` names, as an Event's
// involvedObject in `namespace_`.
StatusOr<nlohmann::json> InvolvedObject(const std::string& events_for,
                                        const std::string& namespace_) {
  static const std::map<std::string, std::string> kApiVersions = {
      {"ConfigMap", "v1"},
      {"Deployment", "apps/v1"},
      {"Lease", "coordination.k8s.io/v1"},
      {"Pod", "v1"}};
  size_t slash = events_for.find('/');
  std::string kind = events_for.substr(0, slash);
  auto api = kApiVersions.find(kind);
  if (slash == std::string::npos || slash + 1 == events_for.size() ||
      api == kApiVersions.end()) {
    return Status::InvalidArgument(fmt::format(
        "--events-for: '{}': expected KIND/NAME, KIND one of ConfigMap, "
        "Deployment, Lease, Pod",
        events_for));
  }
  return nlohmann::json{{"apiVersion", api->second},
                        {"kind", kind},
                        {"name", events_for.substr(slash + 1)},
                        {"namespace", namespace_}};
}

// The Kubernetes objects the autoscaler writes to: the target's and the
// state's keys of the controller's ConfigMap, and the event recorder. The
// options' callbacks point into it: it outlives the run.
struct KubernetesTargets {
  std::optional<kube::KubeClient> client;
  std::optional<kube::ConfigMapKey> target;
  std::optional<kube::ConfigMapKey> state;
  std::optional<kube::EventRecorder> events;
};

// Points `options` at the ConfigMap and the events the flags name.
Status WireKubernetes(const AutoscaleFlags& flags, CommandContext* context,
                      KubernetesTargets* k,
                      autoscale::AutoscaleOptions* options) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::KubeConfig config, LoadKube(flags.kube));
  std::string namespace_ =
      flags.namespace_.empty() ? config.namespace_ : flags.namespace_;
  k->client.emplace(std::move(config));
  if (!flags.target_configmap.empty()) {
    // The key the controller reads (controller --target-configmap).
    auto& target =
        k->target.emplace(&*k->client, namespace_, flags.target_configmap,
                          manager::TargetOptions().key);
    options->target = {
        target.Describe(), [&target] { return target.Read(); },
        [&target](const std::string& text) { return target.Write(text); }};
    if (flags.state.empty()) {
      // Beside the target, in a key only the autoscaler writes: put
      // whatever the map's version (the target's writes move it on).
      auto& state = k->state.emplace(&*k->client, namespace_,
                                     flags.target_configmap, kStateKey);
      options->state = {
          state.Describe(), [&state] { return state.Read(); },
          [&state](const std::string& text) { return state.Put(text); }};
    }
  }
  if (!flags.events_for.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json involved,
                              InvolvedObject(flags.events_for, namespace_));
    auto& events = k->events.emplace(&*k->client, namespace_,
                                     std::move(involved), "migserve-autoscale");
    options->event = [&events, context](const std::string& type,
                                        const std::string& reason,
                                        const std::string& message) {
      Status recorded = events.Record(type, reason, message);
      if (!recorded.ok()) {
        context->err << "autoscale: event " << reason
                     << " not recorded: " << recorded.message() << std::endl;
      }
    };
  }
  return Status::Ok();
}

Status RunAutoscale(const AutoscaleFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(workload::Workload workload,
                            workload::LoadWorkload(flags.workload));
  MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable profiles,
                            profile::LoadProfileCsv(flags.profiles));
  WarnMeasurementGaps(workload, profiles, context->err);
  autoscale::AutoscaleOptions options = flags.options;
  options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  options.sizer.solve.progress = nullptr;
  if (flags.target.empty() == flags.target_configmap.empty()) {
    return Status::InvalidArgument(
        "give the target deployment the controller follows: --target FILE or "
        "--target-configmap NAME (one of them)");
  }
  options.target = autoscale::FileTarget(flags.target);
  if (!flags.state.empty()) options.state = autoscale::FileTarget(flags.state);
  KubernetesTargets kubernetes;
  if (!flags.target_configmap.empty() || !flags.events_for.empty()) {
    MIGSERVE_RETURN_IF_ERROR(
        WireKubernetes(flags, context, &kubernetes, &options));
  }
  InstallInterruptHandlers();
  return autoscale::RunAutoscaler(workload, profiles, std::move(options),
                                  flags.once, InterruptFlag());
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
  app->add_option("--move-time-limit", o->sizer.move_time_limit_s,
                  "Seconds per transition-aware milp run of a move")
      ->capture_default_str();
  app->add_option("--gpus-per-node", o->sizer.gpus_per_node,
                  "GPUs per node for GPUs the target puts on no node")
      ->capture_default_str();
}

}  // namespace

void SetupAutoscale(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<AutoscaleFlags>();
  autoscale::AutoscaleOptions& o = flags->options;
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->add_option("--prometheus", o.prometheus,
                  "Prometheus server: http://host:port[/prefix]")
      ->required();
  app->add_option("--target", flags->target,
                  "Target deployment JSON file the controller follows "
                  "(controller --target): read as the current deployment, "
                  "rewritten on each move");
  app->add_option("--target-configmap", flags->target_configmap,
                  "Or the ConfigMap the controller follows (controller "
                  "--target-configmap; key deployment.json), written only if "
                  "unchanged since read");
  app->add_option("--state", flags->state,
                  "File that keeps the policy's state across restarts "
                  "(cool-downs under way, learned margins); with "
                  "--target-configmap, by default its key " +
                      std::string(kStateKey));
  app->add_option("--namespace", flags->namespace_,
                  "Namespace of --target-configmap and of the events "
                  "(default: the kubeconfig's)");
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
  AddKubeOptions(app, &flags->kube);
  OnRun(app, context,
        [flags, context] { return RunAutoscale(*flags, context); });
}

}  // namespace migserve::cli
