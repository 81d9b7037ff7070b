#include "manager/manager.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "controller/journal_dir.h"
#include "controller/reconciler.h"
#include "deployment/deployment_json.h"
#include "kube/event_recorder.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/dra_check.h"
#include "kubernetes/partition/partitioner.h"
#include "kubernetes/routing/kubernetes_router.h"
#include "kubernetes/routing/routing_objects.h"
#include "manager/health_server.h"
#include "manager/journal_pod_ledger.h"
#include "manager/target_status.h"

namespace migserve::manager {
namespace {

namespace k8s = kubernetes;

int NodeCount(const cluster::ClusterState& state) {
  std::set<std::string> nodes;
  for (const cluster::GpuState& g : state.gpus) nodes.insert(g.id.node);
  return static_cast<int>(nodes.size());
}

// The backend's options completed from the config and the target.
k8s::BackendOptions BackendFor(const ManagerOptions& options,
                               const deployment::Deployment& target) {
  k8s::BackendOptions backend = options.backend;
  backend.namespace_ = options.config.namespace_;
  for (const workload::Service& s : target.services) {
    backend.models[s.name] = s.model;
  }
  backend.serving.KindsFrom(target.services);
  backend.warn = [log = options.log](const std::string& line) {
    log("controller: warning: " + line);
  };
  return backend;
}

// The partition driver the backend acts through (--partitioner); DRA's
// once its preflight finds nothing wrong. It tells `event` (may be empty)
// what an operator should see.
StatusOr<std::unique_ptr<k8s::PartitionDriver>> PartitionerFor(
    const ManagerOptions& options, kube::KubeClient* client,
    EventSink event = {}) {
  if (options.partitioner == k8s::Partitioner::kDra) {
    MIGSERVE_ASSIGN_OR_RETURN(std::vector<k8s::Finding> findings,
                              k8s::CheckDra(client, k8s::Partitioner::kDra));
    std::vector<std::string> problems;
    for (const k8s::Finding& f : findings) {
      if (f.problem) problems.push_back(f.text);
    }
    if (!problems.empty()) {
      return Status::FailedPrecondition(fmt::format(
          "--partitioner dra: {} (migserve doctor --partitioner dra)",
          fmt::join(problems, "; ")));
    }
  }
  k8s::DriverOptions driver;
  driver.namespace_ = options.config.namespace_;
  driver.watch_s = options.backend.watch_s;
  driver.progress = [log = options.log](const std::string& line) {
    log("controller: " + line);
  };
  driver.event = std::move(event);
  return k8s::MakePartitionDriver(options.partitioner, client, driver);
}

// Where the controller's Lease lives: --lease-namespace, else the
// replicas'.
std::string LeaseNamespace(const ManagerOptions& options) {
  return options.lease.namespace_.empty() ? options.config.namespace_
                                          : options.lease.namespace_;
}

// The name of this controller's journal in --journal-dir: its lease
// identity (the pod's name and the process's in a pod).
std::string JournalName(const ManagerOptions& options) {
  return options.lease.identity.empty() ? kube::DefaultLeaseIdentity()
                                        : options.lease.identity;
}

// The journal the controller writes: --journal's file, or its own in
// --journal-dir, begun as a copy of its predecessor's there.
StatusOr<std::unique_ptr<controller::Journal>> OpenJournal(
    const ManagerOptions& options) {
  if (options.journal_dir.empty()) {
    return controller::Journal::Open(options.journal);
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      controller::JournalInDir opened,
      controller::OpenJournalIn(options.journal_dir, JournalName(options)));
  if (!opened.adopted.empty()) {
    options.log(fmt::format(
        "controller: journal {} begins as its predecessor's, {} (fenced at "
        "lease epoch {}); removed {}",
        opened.path, opened.adopted, opened.adopted_epoch,
        fmt::join(opened.removed, ", ")));
  }
  return std::move(opened.journal);
}

// The lease this controller holds while it acts, or null without leader
// election. Renewals go through a client of their own, so that they never
// queue behind the backend's requests, and fail within the renew deadline.
class Leadership {
 public:
  Status Init(const ManagerOptions& options) {
    if (!options.leader_elect) return Status::Ok();
    kube::LeaseOptions lease = options.lease;
    lease.namespace_ = LeaseNamespace(options);
    if (lease.identity.empty()) lease.identity = kube::DefaultLeaseIdentity();
    MIGSERVE_RETURN_IF_ERROR(lease.Validate());
    client_ = std::make_unique<kube::KubeClient>(
        options.config, kube::RetryPolicy{1, 0, lease.renew_deadline_s / 2});
    lease_ = std::make_unique<kube::LeaderLease>(client_.get(), lease);
    return Status::Ok();
  }

  kube::LeaderLease* lease() const { return lease_.get(); }
  bool Lost() const { return lease_ && !lease_->Held(); }
  // OK while this controller may write: it holds the lease, or there is
  // no leader election.
  Status Fence() const { return lease_ ? lease_->Fence() : Status::Ok(); }

  // Hands the lease on after a clean stop. Returns why it could not where
  // the API server refused it (401, 403: the next candidate then waits out
  // the lease, and the permissions need mending); other failures are
  // logged only.
  Status Release(const std::function<void(const std::string&)>& log) {
    if (!lease_ || !lease_->Held()) return Status::Ok();
    Status released = lease_->Release();
    if (released.ok()) return released;
    log("controller: releasing the lease: " + released.message());
    return released.code() == Status::Code::kFailedPrecondition ? released
                                                                : Status::Ok();
  }

 private:
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<kube::LeaderLease> lease_;
};

// The reconcile loop and what it owns.
class Manager {
 public:
  Manager(ManagerOptions options, const std::atomic<bool>& stop)
      : options_(std::move(options)),
        stop_(stop),
        client_(options_.config),
        source_(options_.target, &client_),
        events_(&client_,
                {{"apiVersion", "coordination.k8s.io/v1"},
                 {"kind", "Lease"},
                 {"name", options_.lease.name},
                 {"namespace", LeaseNamespace(options_)}},
                "migserve-controller") {}

  Status Run() {
    if (!options_.target.configmap.empty()) {
      options_.log(
          "controller: warning: --target-configmap is deprecated and goes in "
          "the next release; keep the target in a ServingTarget "
          "(--target-resource, docs/kubernetes.md \"The target\")");
    }
    MIGSERVE_ASSIGN_OR_RETURN(target_, source_.Load());
    generation_ = source_.generation();
    k8s::BackendOptions backend_options = BackendFor(options_, target_);
    MIGSERVE_ASSIGN_OR_RETURN(
        std::unique_ptr<k8s::PartitionDriver> partition,
        PartitionerFor(options_, &client_, events_.Sink(options_.log)));
    backend_options.partition = partition.get();
    k8s::RouterOptions routing{options_.config.namespace_,
                               backend_options.serving, backend_options.models};
    routing.plane = target_.Plane();
    if (routing.serving.gateway) {
      MIGSERVE_RETURN_IF_ERROR(
          k8s::CheckRoutable(routing.models, routing.serving));
    }
    MIGSERVE_RETURN_IF_ERROR(leadership_.Init(options_));
    // Every write of the controller (pods, routes, claims, events), running
    // actions' included, stops the moment it cannot prove it leads.
    client_.SetFence([this] { return leadership_.Fence(); });
    // A standby waits for the lease before it touches the journal, which a
    // leader sharing the file may hold locked.
    if (Status held = AcquireLease(); !held.ok()) {
      return stop_ ? Status::Ok() : held;
    }
    MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<controller::Journal> journal,
                              OpenJournal(options_));
    // The Lease's epoch is the journal's fencing token: a leader replaced
    // while it stalled can no longer mark what its successor resumes.
    if (kube::LeaderLease* lease = leadership_.lease()) {
      MIGSERVE_RETURN_IF_ERROR(journal->Fence(lease->epoch()));
      routing.epoch = lease->epoch();  // and the routes' (kAnnotationEpoch)
      partition->SetLeaseEpoch(lease->epoch());  // and the agents' requests
    }
    JournalPodLedger ledger(journal.get());
    backend_options.ledger = &ledger;
    routing.ledger = &ledger;
    k8s::KubernetesRouter router(&client_, routing);
    k8s::KubernetesBackend backend(&client_, std::move(backend_options));
    MIGSERVE_RETURN_IF_ERROR(Adopt(&backend, journal.get()));
    controller::Reconciler reconciler(&backend, journal.get(),
                                      ControllerOptionsWith(&router));
    HealthServer health(&reconciler);
    if (options_.metrics_port > 0) {
      MIGSERVE_RETURN_IF_ERROR(
          health.Start(options_.metrics_address, options_.metrics_port));
      options_.log(fmt::format("controller: metrics on {}:{}/metrics",
                               options_.metrics_address,
                               options_.metrics_port));
    }
    // Declared after the reconciler it reads: stopped before it goes.
    std::unique_ptr<TargetStatusReporter> status;
    if (std::string path = source_.ResourcePath(); !path.empty()) {
      status = std::make_unique<TargetStatusReporter>(
          &client_, path,
          [this, &reconciler] {
            return TargetProgress{reconciler.Progress(), generation_,
                                  reached_ == generation_};
          },
          options_.log);
      status->Start(options_.target.status_period_s);
    }
    return Loop(&reconciler, status.get());
  }

 private:
  controller::ControllerOptions ControllerOptionsWith(
      k8s::KubernetesRouter* router) {
    controller::ControllerOptions options;
    options.progress = options_.log;
    if (router->KeepsRoutes()) {
      options.router = router;
    } else {
      options_.log("controller: " +
                   (options_.serving_file.empty()
                        ? std::string("no --serving spec")
                        : options_.serving_file + " names no routing.gateway") +
                   " and the target's credits assume no proxy: no routes "
                   "are kept (docs/serving.md)");
    }
    options.event = events_.Sink(options_.log);
    options.may_act = [this] { return MayAct(); };
    options.superseded = [this] { return Superseded(); };
    return options;
  }

  // SIGINT or SIGTERM mid-transition: start nothing more, let running
  // actions end and journal them, then exit (a successor resumes).
  Status MayAct() const {
    if (stop_) {
      return Status::Aborted(
          "stopping on a signal; the journal keeps the "
          "rest of the plan");
    }
    if (Status fenced = leadership_.Fence(); !fenced.ok()) {
      return Status::FailedPrecondition(fenced.message() + "; stepping down");
    }
    return Status::Ok();
  }

  // A newer target mid-transition: the transition stops starting actions,
  // lets the running ones end and the loop moves on to it at once (an
  // unreadable or identical one changes nothing).
  bool Superseded() {
    if (!source_.Changed()) return false;
    auto next = source_.Load();
    if (!next.ok()) {
      options_.log("controller: " + next.status().message() +
                   " (keeping the current target)");
      return false;
    }
    if (deployment::FormatDeployment(*next) ==
        deployment::FormatDeployment(target_)) {
      generation_ = source_.generation();  // the same target, rewritten
      return false;
    }
    newer_ = std::move(*next);
    newer_generation_ = source_.generation();
    return true;
  }

  // With --adopt, or after the journal's upgrade from a format that kept no
  // pods until an adoption succeeds, records the pods annotated as this
  // controller's.
  Status Adopt(k8s::KubernetesBackend* backend, controller::Journal* journal) {
    bool upgraded = journal->predates_pods();
    if (!options_.adopt && !upgraded) return Status::Ok();
    MIGSERVE_ASSIGN_OR_RETURN(std::vector<std::string> adopted,
                              backend->Adopt());
    if (upgraded) MIGSERVE_RETURN_IF_ERROR(journal->PodsAdopted());
    options_.log(fmt::format(
        "controller: {}adopted {} pods annotated {}={} (recorded in the "
        "journal as this controller's)",
        upgraded ? "journal upgraded to format 4: " : "", adopted.size(),
        k8s::kAnnotationOwner, options_.backend.owner));
    return Status::Ok();
  }

  // Waits until this controller holds the lease (at once without leader
  // election).
  Status AcquireLease() {
    if (!leadership_.lease()) return Status::Ok();
    return leadership_.lease()->Acquire(stop_, [this](const std::string& line) {
      options_.log("controller: " + line);
    });
  }

  // One pass with `once`, until stopped without it (the lease held). One
  // that stepped down returns non-zero (to restart as a candidate); one that
  // was asked to stop hands the lease on. `status` (may be null) reports
  // before and after each pass.
  Status Loop(controller::Reconciler* reconciler,
              TargetStatusReporter* status) {
    Status last;
    bool stepped_down = false;
    while (last.ok() || !options_.once) {
      if (stop_) break;
      if (leadership_.Lost()) {
        last = MayAct();
        stepped_down = true;
        break;
      }
      // A new generation is Progressing from before its pass starts.
      if (status) status->Report();
      last = reconciler->Reconcile(target_);
      if (!last.ok()) options_.log("controller: " + last.message());
      if (last.ok() && !newer_) reached_ = generation_.load();
      if (status) status->Report();
      if (newer_) {
        target_ = std::move(*newer_);
        generation_ = newer_generation_;
        newer_.reset();
        continue;
      }
      if (options_.once || stop_) break;
      source_.Wait(stop_);
      if (stop_) break;
      NextTarget();
    }
    Status released = leadership_.Release(options_.log);
    if (stepped_down) return last;
    if (last.ok() && !released.ok()) return released;
    if (stop_) return Status::Ok();
    return options_.once ? last : Status::Ok();
  }

  void NextTarget() {
    auto next = source_.Load();
    if (next.ok()) {
      target_ = *next;
      generation_ = source_.generation();
    } else {
      options_.log("controller: " + next.status().message() +
                   " (keeping the previous target)");
    }
  }

  ManagerOptions options_;
  const std::atomic<bool>& stop_;
  kube::KubeClient client_;
  TargetSource source_;
  kube::EventRecorder events_;  // about the controller's Lease
  Leadership leadership_;
  deployment::Deployment target_;
  std::optional<deployment::Deployment> newer_;
  // The ServingTarget's generations (0 for another target): of target_,
  // of newer_, and the last whose target a pass ended at.
  std::atomic<long> generation_ = 0;
  long newer_generation_ = 0;
  std::atomic<long> reached_ = -1;
};

// The journal a dry run reads, never writes: the controller's own (or in
// --journal-dir the one it would adopt), or an empty one where it has none
// yet (the controller would start with no pods of its own).
StatusOr<std::unique_ptr<controller::Journal>> DryRunJournal(
    const ManagerOptions& options) {
  StatusOr<std::string> path =
      options.journal_dir.empty()
          ? StatusOr<std::string>(options.journal)
          : controller::JournalToReadIn(options.journal_dir,
                                        JournalName(options));
  StatusOr<std::unique_ptr<controller::Journal>> journal =
      path.ok() ? controller::Journal::OpenReadOnly(*path)
                : StatusOr<std::unique_ptr<controller::Journal>>(path.status());
  if (journal.ok() || journal.status().code() != Status::Code::kNotFound) {
    return journal;
  }
  if (!options.adopt) {
    options.log(fmt::format(
        "controller: dry run: no journal at {}: the controller would count "
        "none of the pods annotated as its own (pass --adopt on its first "
        "run)",
        options.journal_dir.empty() ? options.journal : options.journal_dir));
  }
  return controller::Journal::Open(":memory:");
}

}  // namespace

Status RunManager(ManagerOptions options, const std::atomic<bool>& stop) {
  MIGSERVE_RETURN_IF_ERROR(options.target.Validate());
  Manager manager(std::move(options), stop);
  return manager.Run();
}

StatusOr<cluster::TransitionPlan> DryRun(ManagerOptions options) {
  MIGSERVE_RETURN_IF_ERROR(options.target.Validate());
  kube::KubeClient client(options.config);
  TargetSource source(options.target, &client);
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment target, source.Load());
  k8s::BackendOptions backend_options = BackendFor(options, target);
  MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<k8s::PartitionDriver> partition,
                            PartitionerFor(options, &client));
  backend_options.partition = partition.get();
  MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<controller::Journal> journal,
                            DryRunJournal(options));
  JournalPodLedger ledger(journal.get());
  // Where the controller would adopt the annotated pods, they count.
  if (!options.adopt && !journal->predates_pods()) {
    backend_options.ledger = &ledger;
  }
  k8s::KubernetesBackend backend(&client, std::move(backend_options));
  MIGSERVE_ASSIGN_OR_RETURN(cluster::ClusterState observed, backend.Observe());
  controller::TransitionGoal goal =
      controller::GoalFromObserved(observed, target);
  MIGSERVE_ASSIGN_OR_RETURN(
      controller::PlannedTransition planned,
      controller::PlanSurvivingIfPossible(observed, target, goal));
  cluster::TransitionPlan& plan = planned.plan;
  controller::SafetyReport report =
      controller::CheckPlan(observed, plan, planned.goal);
  if (!report.ok()) {
    return Status::Internal("the planner made an unsafe plan: " +
                            report.problems.front());
  }
  if (planned.survive_dropped.dropped()) {
    options.log("controller: dry run: " + planned.survive_dropped.Sentence());
  }
  std::map<std::string_view, int> counts;
  for (const cluster::Action& a : plan.actions) ++counts[KindName(a.kind)];
  options.log(fmt::format(
      "controller: dry run: {} GPUs on {} nodes observed; {} actions ({} "
      "create, {} delete, {} migrate, {} repartition), safe in every order; "
      "nothing was changed",
      observed.gpus.size(), NodeCount(observed), plan.actions.size(),
      counts["create"], counts["delete"], counts["migrate"],
      counts["repartition"]));
  return plan;
}

}  // namespace migserve::manager
