// migserve controller --target F | --target-resource NAME
//     | --target-configmap NAME [--kubeconfig F]
//     [--partitioner agent|dra]
// The reconcile loop on Kubernetes (the controller manager, src/manager/):
// reads the target deployment, moves the cluster there through the
// journaled controller, waits for the target to change (or resyncs), and
// serves /metrics, /progress and /healthz. This file parses the flags.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/kube_flags.h"
#include "cli/serving_flags.h"
#include "cluster/plan_json.h"
#include "manager/manager.h"
#include "profile/profile_csv.h"
#include "util/interrupt.h"

namespace migserve::cli {
namespace {

struct ControllerFlags {
  KubeFlags kube;
  std::string namespace_;
  std::string image;
  int port = 0;
  bool dry_run = false;
  bool no_leader_elect = false;
  std::string profiles;
  manager::ManagerOptions manager;
};

Status RunController(ControllerFlags flags, CommandContext* context) {
  manager::ManagerOptions& options = flags.manager;
  MIGSERVE_ASSIGN_OR_RETURN(options.config, LoadKube(flags.kube));
  if (!flags.profiles.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable profiles,
                              profile::LoadProfileCsv(flags.profiles));
    options.target.profiles =
        std::make_shared<const profile::ProfileTable>(std::move(profiles));
  }
  if (!options.serving_file.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        options.backend.serving,
        kubernetes::LoadServingSpec(options.serving_file));
    if (!options.backend.serving.namespace_.empty()) {
      options.config.namespace_ = options.backend.serving.namespace_;
    }
  }
  OverrideTemplate(flags.image, flags.port, &options.backend.serving);
  if (!flags.namespace_.empty()) options.config.namespace_ = flags.namespace_;
  options.leader_elect = !flags.no_leader_elect;
  options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  if (flags.dry_run) {
    MIGSERVE_ASSIGN_OR_RETURN(cluster::TransitionPlan plan,
                              manager::DryRun(std::move(options)));
    context->out << cluster::FormatPlan(plan);
    return Status::Ok();
  }
  // SIGINT or SIGTERM ends the loop after the current pass.
  InstallInterruptHandlers();
  return manager::RunManager(std::move(options), InterruptFlag());
}

void AddTargetOptions(CLI::App* app, ControllerFlags* flags) {
  manager::TargetOptions* target = &flags->manager.target;
  app->add_option("--target", target->file,
                  "Target deployment JSON file (watched for changes)");
  app->add_option("--target-resource", target->resource,
                  "ServingTarget (migserve.io) whose spec is the target "
                  "deployment (watched); its status says how the move goes");
  app->add_option("--target-configmap", target->configmap,
                  "Deprecated: ConfigMap holding the target deployment "
                  "(watched); use --target-resource");
  app->add_option("--target-key", target->key,
                  "Key of the deployment JSON in the ConfigMap")
      ->capture_default_str();
  app->add_option("-p,--profiles", flags->profiles,
                  "Profile CSV: refuse a target whose replica declares more "
                  "throughput than was measured for it");
}

void AddLeaseOptions(CLI::App* app, ControllerFlags* flags) {
  kube::LeaseOptions& lease = flags->manager.lease;
  app->add_flag("--no-leader-elect", flags->no_leader_elect,
                "Act without holding the lease (only where no other "
                "controller can run)");
  app->add_option("--lease-name", lease.name,
                  "Lease (coordination.k8s.io/v1) the acting controller holds")
      ->capture_default_str();
  app->add_option("--lease-namespace", lease.namespace_,
                  "Namespace of the lease (default: --namespace's)");
  app->add_option("--lease-identity", lease.identity,
                  "This controller's name in the lease (default: "
                  "<hostname>_<pid>)");
  app->add_option("--lease-duration-s", lease.duration_s,
                  "A candidate takes the lease after its holder has not "
                  "renewed it for this long")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--renew-deadline-s", lease.renew_deadline_s,
                  "The holder stops acting if it has not renewed for this "
                  "long (less than the duration)")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--retry-period-s", lease.retry_s,
                  "Seconds between tries to take or renew the lease")
      ->capture_default_str()
      ->check(Positive());
}

void AddBackendOptions(CLI::App* app, ControllerFlags* flags) {
  kubernetes::BackendOptions& backend = flags->manager.backend;
  app->add_option("--node-selector", backend.node_selector,
                  "Label selector of the MIG nodes")
      ->capture_default_str();
  AddServingOptions(app, &flags->manager.serving_file, &flags->image,
                    &flags->port);
  app->add_option("--poll-s", backend.poll_s,
                  "Longest wait between looks at running actions: after a "
                  "quiet spell this long each is checked (a change the "
                  "watch brings wakes its actions at once)")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--partitioner", flags->manager.partitioner,
                  "Who partitions the GPUs: agent (migserve's node agent) or "
                  "dra (claims through NVIDIA's DRA driver, DynamicMIG; "
                  "docs/kubernetes.md, \"The controller on DRA\")")
      ->transform(
          OneOf<kubernetes::Partitioner>(kubernetes::PartitionerNames(true)))
      ->default_str("agent");
  app->add_option("--action-timeout-s", backend.action_timeout_s,
                  "An action not done after this long fails")
      ->capture_default_str()
      ->check(Positive());
}

}  // namespace

void SetupController(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ControllerFlags>();
  manager::ManagerOptions& options = flags->manager;
  AddKubeOptions(app, &flags->kube);
  AddTargetOptions(app, flags.get());
  app->add_option("--namespace", flags->namespace_,
                  "Namespace of replica pods and the ConfigMap (default: the "
                  "kubeconfig's or the service account's)");
  CLI::Option* journal =
      app->add_option("--journal", options.journal,
                      "SQLite journal; a restarted controller resumes from it")
          ->capture_default_str();
  app->add_option("--journal-dir", options.journal_dir,
                  "Directory of journals, one per controller (its file named "
                  "by its lease identity): a new controller begins with a "
                  "copy of its predecessor's (the one fenced at the newest "
                  "lease epoch) and removes the others, so that one stopped "
                  "while it held its journal locked never blocks it; the "
                  "shipped manifest's (docs/kubernetes.md)")
      ->excludes(journal);
  app->add_option("--metrics-port", options.metrics_port,
                  "Port for /metrics, /progress, /healthz (0: none)")
      ->capture_default_str()
      ->check(Between(0, 65535));
  app->add_option("--metrics-address", options.metrics_address,
                  "Address to serve them on (unauthenticated: the default "
                  "serves this machine only; deploy/base/controller.yaml gives "
                  "the pod's IP)")
      ->capture_default_str();
  AddBackendOptions(app, flags.get());
  app->add_option("--resync-s", options.target.resync_s,
                  "Reconcile at least this often, changed target or not")
      ->capture_default_str()
      ->check(Positive());
  AddLeaseOptions(app, flags.get());
  app->add_flag("--once", options.once,
                "Reconcile once and exit (exit 0 at the target)");
  app->add_flag("--adopt", options.adopt,
                "Before the first reconcile, record every pod annotated "
                "migserve.io/owner with this controller's name as its own "
                "(pods of a migserve older than journal format 4, or of a "
                "journal moved away; docs/kubernetes.md, \"Adopting pods\")");
  app->add_flag("--dry-run", flags->dry_run,
                "Observe the cluster, plan, print the plan (JSON on stdout, "
                "summary on stderr) and exit; change nothing, write no "
                "journal");
  OnRun(app, context,
        [flags, context] { return RunController(*flags, context); });
}

}  // namespace migserve::cli
