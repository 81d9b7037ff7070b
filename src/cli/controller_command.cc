// migserve controller --target F | --target-configmap NAME [--kubeconfig F]
// The reconcile loop on Kubernetes: reads the target deployment, moves the
// cluster there through the journaled controller, waits for the target to
// change (or resyncs), and serves /metrics, /progress and /healthz.
#include <fmt/format.h>
#include <httplib.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/kube_flags.h"
#include "cli/serving_flags.h"
#include "cluster/kubernetes/informer.h"
#include "cluster/kubernetes/kubernetes_backend.h"
#include "cluster/kubernetes/kubernetes_router.h"
#include "cluster/kubernetes/leader_lease.h"
#include "cluster/kubernetes/routing_objects.h"
#include "cluster/plan_json.h"
#include "controller/reconciler.h"
#include "deployment/deployment_json.h"

namespace migserve::cli {
namespace {

namespace k8s = cluster::kubernetes;

struct ControllerFlags {
  KubeFlags kube;
  std::string target_file;
  std::string target_configmap;
  std::string target_key = "deployment.json";
  std::string namespace_;
  std::string journal = "migserve-journal.db";
  bool dry_run = false;
  std::string metrics_address = "127.0.0.1";
  int metrics_port = 9090;
  double resync_s = 30;
  bool once = false;
  std::string serving;
  std::string image;
  int port = 0;
  k8s::BackendOptions backend;
  bool no_leader_elect = false;
  k8s::LeaseOptions lease;
};

// The target deployment: a file (its modification time tells a change) or
// a ConfigMap (followed by a watch-fed cache: asking costs no request).
class TargetSource {
 public:
  TargetSource(const ControllerFlags& flags, k8s::KubeClient* client)
      : flags_(flags),
        client_(client),
        map_(client,
             fmt::format("/api/v1/namespaces/{}/configmaps", Namespace()),
             "fieldSelector=" + k8s::KubeClient::Escape("metadata.name=" +
                                                        flags.target_configmap),
             static_cast<int>(flags.resync_s)) {}

  StatusOr<deployment::Deployment> Load() {
    if (!flags_.target_file.empty()) {
      std::error_code error;
      mtime_ = std::filesystem::last_write_time(flags_.target_file, error);
      return deployment::LoadDeployment(flags_.target_file);
    }
    MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json map, client_->Get(Path()));
    version_ = map["metadata"].value("resourceVersion", "");
    std::string source =
        fmt::format("configmap {}/{} key {}", Namespace(),
                    flags_.target_configmap, flags_.target_key);
    const auto& data = map.value("data", nlohmann::json::object());
    if (!data.contains(flags_.target_key)) {
      return Status::InvalidArgument(source + ": missing");
    }
    return deployment::ParseDeployment(
        data[flags_.target_key].get<std::string>(), source);
  }

  // True if the target has changed since the last Load.
  bool Changed() {
    if (!flags_.target_file.empty()) {
      std::error_code error;
      return std::filesystem::last_write_time(flags_.target_file, error) !=
             mtime_;
    }
    if (!map_.Get().ok()) return false;  // the cache says why, next time
    std::optional<nlohmann::json> map = map_.Find(flags_.target_configmap);
    return map && map->contains("metadata") &&
           (*map)["metadata"].value("resourceVersion", "") != version_;
  }

  // Returns when the target may have changed, after at most resync_s.
  void Wait(const std::atomic<bool>& stop) {
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::duration<double>(flags_.resync_s);
    while (!stop && std::chrono::steady_clock::now() < until && !Changed()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

 private:
  std::string Namespace() const { return client_->config().namespace_; }
  std::string Path() const {
    return fmt::format("/api/v1/namespaces/{}/configmaps/{}", Namespace(),
                       flags_.target_configmap);
  }

  const ControllerFlags& flags_;
  k8s::KubeClient* client_;
  k8s::Informer map_;
  std::filesystem::file_time_type mtime_;
  std::string version_;
};

int NodeCount(const cluster::ClusterState& state) {
  std::set<std::string> nodes;
  for (const cluster::GpuState& g : state.gpus) nodes.insert(g.id.node);
  return static_cast<int>(nodes.size());
}

// Observes the cluster, plans the move to `target` and prints the plan
// (JSON on stdout, a summary on stderr). Writes nothing anywhere: no
// journal, no Kubernetes object.
Status DryRun(cluster::ClusterBackend* backend,
              const deployment::Deployment& target, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed, backend->Observe());
  controller::TransitionGoal goal =
      controller::GoalFromObserved(observed, target);
  MIGSERVE_ASSIGN_OR_RETURN(cluster::TransitionPlan plan,
                            controller::PlanTransition(observed, target, goal));
  controller::SafetyReport report = controller::CheckPlan(observed, plan, goal);
  if (!report.ok()) {
    return Status::Internal("the planner made an unsafe plan: " +
                            report.problems.front());
  }
  std::map<std::string_view, int> counts;
  for (const cluster::Action& a : plan.actions) ++counts[KindName(a.kind)];
  context->err << fmt::format(
      "controller: dry run: {} GPUs on {} nodes observed; {} actions ({} "
      "create, {} delete, {} migrate, {} repartition), safe in every order; "
      "nothing was changed\n",
      observed.gpus.size(), NodeCount(observed), plan.actions.size(),
      counts["create"], counts["delete"], counts["migrate"],
      counts["repartition"]);
  context->out << cluster::FormatPlan(plan);
  return Status::Ok();
}

Status RunController(ControllerFlags flags, CommandContext* context) {
  // SIGINT or SIGTERM ends the loop after the current pass.
  const std::atomic<bool>& stop = StopRequested();
  if (flags.target_file.empty() == flags.target_configmap.empty()) {
    return Status::InvalidArgument(
        "give exactly one of --target and --target-configmap");
  }
  MIGSERVE_ASSIGN_OR_RETURN(k8s::KubeConfig config, LoadKube(flags.kube));
  if (!flags.serving.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(flags.backend.serving,
                              k8s::LoadServingSpec(flags.serving));
    if (!flags.backend.serving.namespace_.empty()) {
      config.namespace_ = flags.backend.serving.namespace_;
    }
  }
  OverrideTemplate(flags.image, flags.port, &flags.backend.serving);
  if (!flags.namespace_.empty()) config.namespace_ = flags.namespace_;
  k8s::KubeClient client(config);
  TargetSource source(flags, &client);
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment target, source.Load());
  flags.backend.namespace_ = config.namespace_;
  for (const workload::Service& s : target.services) {
    flags.backend.models[s.name] = s.model;
  }
  flags.backend.warn = [context](const std::string& line) {
    context->err << "controller: warning: " << line << std::endl;
  };
  k8s::KubernetesBackend backend(&client, flags.backend);
  if (flags.dry_run) return DryRun(&backend, target, context);
  k8s::RouterOptions routing{config.namespace_, flags.backend.serving,
                             flags.backend.models};
  if (routing.serving.gateway) {
    MIGSERVE_RETURN_IF_ERROR(
        k8s::CheckRoutable(routing.models, routing.serving));
  }
  k8s::KubernetesRouter router(&client, routing);
  MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<controller::Journal> journal,
                            controller::Journal::Open(flags.journal));
  controller::ControllerOptions options;
  options.progress = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  if (flags.backend.serving.gateway) {
    options.router = &router;
  } else {
    context->err << "controller: "
                 << (flags.serving.empty() ? "no --serving spec"
                                           : flags.serving +
                                                 " names no "
                                                 "routing.gateway")
                 << ": no routes are kept (docs/serving.md)\n";
  }
  // One controller acts at a time: the others wait for the lease. The loop
  // below makes one pass with --once and runs until stopped without it.
  std::unique_ptr<k8s::KubeClient> lease_client;
  std::unique_ptr<k8s::LeaderLease> lease;
  if (!flags.no_leader_elect) {
    if (flags.lease.namespace_.empty()) {
      flags.lease.namespace_ = config.namespace_;
    }
    if (flags.lease.identity.empty()) {
      flags.lease.identity = k8s::DefaultLeaseIdentity();
    }
    MIGSERVE_RETURN_IF_ERROR(flags.lease.Validate());
    // A client of its own, so that renewals never queue behind the
    // backend's requests, and fail within the renew deadline.
    lease_client = std::make_unique<k8s::KubeClient>(
        config, k8s::RetryPolicy{1, 0, flags.lease.renew_deadline_s / 2});
    lease = std::make_unique<k8s::LeaderLease>(lease_client.get(), flags.lease);
  }
  // SIGINT or SIGTERM mid-transition: start nothing more, let running
  // actions end and journal them, then exit (a successor resumes).
  options.may_act = [&lease, &stop]() {
    if (stop) {
      return Status::Aborted(
          "stopping on a signal; the journal keeps the "
          "rest of the plan");
    }
    if (lease && !lease->Held()) {
      return Status::FailedPrecondition("lost the lease (held by " +
                                        lease->holder() + "); stepping down");
    }
    return Status::Ok();
  };
  // A newer target mid-transition: the transition stops starting actions,
  // lets the running ones end and the loop moves on to it at once (an
  // unreadable or identical one changes nothing).
  std::optional<deployment::Deployment> newer;
  options.superseded = [&]() {
    if (!source.Changed()) return false;
    auto next = source.Load();
    if (!next.ok()) {
      context->err << "controller: " << next.status().message()
                   << " (keeping the current target)\n";
      return false;
    }
    if (deployment::FormatDeployment(*next) ==
        deployment::FormatDeployment(target)) {
      return false;
    }
    newer = std::move(*next);
    return true;
  };
  controller::Reconciler reconciler(&backend, journal.get(), options);

  httplib::Server server;
  std::thread serving;
  if (flags.metrics_port > 0) {
    server.Get(
        "/metrics", [&](const httplib::Request&, httplib::Response& res) {
          res.set_content(reconciler.Metrics(), "text/plain; version=0.0.4");
        });
    server.Get("/progress", [&](const httplib::Request&,
                                httplib::Response& res) {
      res.set_content(reconciler.Progress().dump(2) + "\n", "application/json");
    });
    server.Get("/healthz",
               [&](const httplib::Request&, httplib::Response& res) {
                 Status health = reconciler.Health();
                 res.status = health.ok() ? 200 : 503;
                 res.set_content(health.ok() ? "ok\n" : health.message() + "\n",
                                 "text/plain");
               });
    if (!server.bind_to_port(flags.metrics_address.c_str(),
                             flags.metrics_port)) {
      return Status::Unavailable(fmt::format(
          "cannot listen on {}:{}", flags.metrics_address, flags.metrics_port));
    }
    serving = std::thread([&] { server.listen_after_bind(); });
    context->err << fmt::format("controller: metrics on {}:{}/metrics\n",
                                flags.metrics_address, flags.metrics_port);
  }
  Status last;
  if (lease) {
    last = lease->Acquire(stop, [context](const std::string& line) {
      context->err << "controller: " << line << std::endl;
    });
  }
  bool stepped_down = false;
  while (last.ok() || !flags.once) {
    if (stop) break;
    if (lease && !lease->Held()) {
      last = options.may_act();
      stepped_down = true;
      break;
    }
    last = reconciler.Reconcile(target);
    if (!last.ok()) context->err << "controller: " << last.message() << "\n";
    if (newer) {
      target = std::move(*newer);
      newer.reset();
      continue;
    }
    if (flags.once || stop) break;
    source.Wait(stop);
    if (stop) break;
    auto next = source.Load();
    if (next.ok()) {
      target = *next;
    } else {
      context->err << "controller: " << next.status().message()
                   << " (keeping the previous target)\n";
    }
  }
  if (serving.joinable()) {
    server.stop();
    serving.join();
  }
  // One that stepped down exits non-zero (to restart as a candidate); one
  // that was asked to stop hands the lease on.
  if (lease && lease->Held()) {
    Status released = lease->Release();
    if (!released.ok()) {
      context->err << "controller: releasing the lease: " << released.message()
                   << "\n";
    }
  }
  if (stepped_down) return last;
  if (stop) return Status::Ok();
  return flags.once ? last : Status::Ok();
}

}  // namespace

void SetupController(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ControllerFlags>();
  AddKubeOptions(app, &flags->kube);
  app->add_option("--target", flags->target_file,
                  "Target deployment JSON file (watched for changes)");
  app->add_option("--target-configmap", flags->target_configmap,
                  "ConfigMap holding the target deployment (watched)");
  app->add_option("--target-key", flags->target_key,
                  "Key of the deployment JSON in the ConfigMap")
      ->capture_default_str();
  app->add_option("--namespace", flags->namespace_,
                  "Namespace of replica pods and the ConfigMap (default: the "
                  "kubeconfig's or the service account's)");
  app->add_option("--journal", flags->journal,
                  "SQLite journal; a restarted controller resumes from it")
      ->capture_default_str();
  app->add_option("--metrics-port", flags->metrics_port,
                  "Port for /metrics, /progress, /healthz (0: none)")
      ->capture_default_str()
      ->check(Between(0, 65535));
  app->add_option("--metrics-address", flags->metrics_address,
                  "Address to serve them on (unauthenticated: the default "
                  "serves this machine only; deploy/controller.yaml gives "
                  "the pod's IP)")
      ->capture_default_str();
  app->add_option("--node-selector", flags->backend.node_selector,
                  "Label selector of the MIG nodes")
      ->capture_default_str();
  AddServingOptions(app, &flags->serving, &flags->image, &flags->port);
  app->add_option("--poll-s", flags->backend.poll_s,
                  "Longest wait between checks of running actions (a "
                  "change the watch brings wakes it at once)")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--action-timeout-s", flags->backend.action_timeout_s,
                  "An action not done after this long fails")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--resync-s", flags->resync_s,
                  "Reconcile at least this often, changed target or not")
      ->capture_default_str()
      ->check(Positive());
  app->add_flag("--no-leader-elect", flags->no_leader_elect,
                "Act without holding the lease (only where no other "
                "controller can run)");
  app->add_option("--lease-name", flags->lease.name,
                  "Lease (coordination.k8s.io/v1) the acting controller holds")
      ->capture_default_str();
  app->add_option("--lease-namespace", flags->lease.namespace_,
                  "Namespace of the lease (default: --namespace's)");
  app->add_option("--lease-identity", flags->lease.identity,
                  "This controller's name in the lease (default: "
                  "<hostname>_<pid>)");
  app->add_option("--lease-duration-s", flags->lease.duration_s,
                  "A candidate takes the lease after its holder has not "
                  "renewed it for this long")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--renew-deadline-s", flags->lease.renew_deadline_s,
                  "The holder stops acting if it has not renewed for this "
                  "long (less than the duration)")
      ->capture_default_str()
      ->check(Positive());
  app->add_option("--retry-period-s", flags->lease.retry_s,
                  "Seconds between tries to take or renew the lease")
      ->capture_default_str()
      ->check(Positive());
  app->add_flag("--once", flags->once,
                "Reconcile once and exit (exit 0 at the target)");
  app->add_flag("--dry-run", flags->dry_run,
                "Observe the cluster, plan, print the plan (JSON on stdout, "
                "summary on stderr) and exit; change nothing, write no "
                "journal");
  app->callback([flags, context] {
    Status s = RunController(*flags, context);
    if (!s.ok()) context->Fail(s);
  });
}

}  // namespace migserve::cli
