// The controller's backend on Kubernetes (DESIGN 6; paper 8: actions are
// wrappers of Kubernetes operations). The cluster is the nodes that match
// the node selector and whose partition driver reports GPUs
// (partition/partition_driver.h, the partitioner's; partitioner.h); a GPU is
// identified by (node name, device index) and has the model its driver
// reported, so nodes joining or leaving never rename the others. A replica is a
// Pod labelled with its service and placement (replica_pod.h); it counts once
// it is Ready. What cannot be read (a malformed annotation, a pod label naming
// no GPU) is reported through `warn` once and ignored, never guessed at. Pods
// and nodes are read from watch-fed caches (informer.h): after the first looks,
// observing costs no request, and waiting for an action wakes when the cache
// changes. The cluster is kept in books updated change by change
// (cluster_books.h), read without a copy through Live(), and a change wakes
// only the actions that wait on the pod or node it touched: an action event
// costs what changed, not the cluster's size. Actions:
//   create       create the pod; ends when it is Ready
//   delete       delete the pod; ends when it is gone
//   migrate      create at the destination, then (once Ready) delete the
//                source; ends when the source is gone
// Each delete of a replica's pod is asked of the removal guard first, on
// books brought up to date at that moment (cluster_backend.h); a refused
// migration ends failed with its source still serving beside its new pod.
//   repartition  start the change through the partition driver; ends when
//                the driver says the change is done
// A pod that fails, the driver's error and a timeout fail the action. Creates
// are idempotent (a pod that exists already is the replica, if it is the
// one this controller created), so a restarted controller can start an
// action again. With a ledger (pod_ledger.h) a pod is the controller's only
// if the ledger holds its uid: copied labels and annotations give a pod
// nothing.
#ifndef MIGSERVE_KUBERNETES_KUBERNETES_BACKEND_H_
#define MIGSERVE_KUBERNETES_KUBERNETES_BACKEND_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_backend.h"
#include "kube/informer.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_books.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"
#include "kubernetes/pod_ledger.h"
#include "kubernetes/replica_pod.h"
#include "util/log_sink.h"
#include "util/mutex.h"

namespace migserve::kubernetes {

struct BackendOptions {
  std::string namespace_ = "default";  // where replica pods live
  std::string node_selector = "nvidia.com/mig.capable=true";
  ServingSpec serving;  // how replica pods run
  // service -> DNN model, for replicas that do not name theirs.
  std::map<std::string, std::string> models;
  // The longest wait between looks (a change the watch sees wakes the
  // actions waiting on it at once, and a timeout is noticed when it is
  // due): after a quiet spell this long every running action is checked.
  double poll_s = 1.0;
  double action_timeout_s = 900;
  LogSink warn;  // may be empty
  // Seconds a watch of pods or nodes lasts before it is renewed.
  int watch_s = 300;
  // The controller's name: pods annotated with another owner, or none, are
  // never counted as replicas, never deleted, never taken for a create's.
  std::string owner = kDefaultOwner;
  // The pods this controller created (not owned; outlives the backend).
  // Null: a pod annotated with `owner` is taken as the controller's, which
  // only read-only views (observe, --dry-run) and tests should rely on.
  PodLedger* ledger = nullptr;
  // How GPUs are partitioned (not owned; outlives the backend): the
  // driver of the partitioner in use (partition/partitioner.h). Required:
  // without one every call fails saying so, rather than guess the agent.
  PartitionDriver* partition = nullptr;
};

class KubernetesBackend : public ClusterBackend {
 public:
  using Clock = std::chrono::steady_clock;

  // `client` is not owned and outlives the backend.
  KubernetesBackend(kube::KubeClient* client, BackendOptions options);

  StatusOr<ClusterState> Observe() override;
  // Brings the books up to date with the caches first; nothing where they
  // cannot be read (then Observe says why).
  std::optional<LiveView> Live() override;
  Status Start(const Action& action) override;
  std::vector<int> Running() const override;
  StatusOr<ActionResult> WaitAny() override;
  // Asked, with the books brought up to date, before a delete's pod and
  // before a migration's source pod is deleted.
  void SetRemovalGuard(RemovalGuard guard) override {
    guard_ = std::move(guard);
  }

  // Records in the ledger every pod annotated with this controller's owner
  // name that it does not hold yet (`controller --adopt`: pods of an older
  // migserve, or of a journal moved away); returns their names. No-op
  // without a ledger.
  StatusOr<std::vector<std::string>> Adopt();

 private:
  struct Pending {
    Action action;
    Clock::time_point deadline;   // its start + the action timeout
    std::string ticket;           // repartitions: the driver's
    bool source_deleted = false;  // migrations
    // Creates and migrations: the new pod has been in the cache (until
    // then its absence means the watch has not brought it yet, or that it
    // is gone already: the API server is asked, once a poll period).
    bool seen = false;
    // While the cache lacks it, the API server is asked no sooner than
    // this: the watch shows a new pod within milliseconds, so only a pod
    // missing from it for seconds is looked up (none in a quiet cluster).
    Clock::time_point ask_after{};
  };

  static std::string PodName(const InstanceRef& ref,
                             const std::string& service);
  // FailedPrecondition unless a partition driver was given.
  Status HasDriver() const;
  // Reports `message` through options_.warn, once per distinct message.
  void Warn(const std::string& message);
  Status CreatePod(const InstanceRef& ref, const Replica& replica);
  // Deletes pod `name` if it is ours, and only that pod (its uid), and
  // forgets it; FailedPrecondition if it is not ours. `seen` is the pod as
  // the caller judged it (the removal guard's look); without it, the pod as
  // cached, else as read.
  Status DeletePod(const std::string& name,
                   std::optional<nlohmann::json> seen = std::nullopt);
  // OK if `pod` (named `name`) is annotated with options_.owner and, with a
  // ledger, is the pod the ledger records (its uid, or the token of a
  // create whose answer was lost: then its uid is recorded).
  Status Owned(const std::string& name, const nlohmann::json& pod);
  // Reads the ledger once.
  Status LoadLedger();
  // Records pod `name` in the ledger, or forgets it; either way its claim
  // is judged again at the next Sync.
  Status Record(const std::string& name, const LedgerEntry& entry);
  Status Forget(const std::string& name);
  // The slot `pod` (named `name`) is counted on: a Ready pod of this
  // controller with readable labels; else none, and a warning says why
  // where it is Ready.
  std::optional<PodClaim> Claim(const std::string& name,
                                const nlohmann::json& pod);
  // Lists the caches where they are not watched yet, brings books_ up to
  // date with what changed since and wakes the actions waiting on it.
  Status Sync();
  // Called by the caches after each change.
  void Changed();
  // Waits until a change after the `seen`-th, or `timeout_s`; false if
  // none came.
  bool WaitForChange(long seen, double timeout_s);
  // The pods and nodes whose changes can end action `a`.
  std::vector<std::string> PodsOf(const Action& a) const;
  std::vector<std::string> NodesOf(const Action& a) const;
  // Forgets pending action `id`, with what would wake it.
  void Drop(int id);
  // The removal guard's answer about `a` deleting its replica's pod now,
  // on the books as they are.
  Status GuardRemoval(const Action& a) const;
  // Returns the outcome of `p` if it has ended.
  StatusOr<std::optional<Status>> Poll(Pending* p);
  std::string PodsPath() const;

  // Reads node `name`'s GPUs through the partition driver into the books
  // (none where the node is gone; warned of and none where unreadable).
  void SetNode(const std::string& name, const nlohmann::json* node);

  kube::KubeClient* client_;
  BackendOptions options_;
  PartitionDriver* partition_;
  Mutex changes_mu_;
  std::condition_variable changed_;
  long changes_ GUARDED_BY(changes_mu_) = 0;
  kube::Informer pods_;
  kube::Informer nodes_;
  std::set<std::string> warned_;
  std::optional<std::map<std::string, LedgerEntry>> ledger_;
  ClusterBooks books_;
  std::set<std::string> stale_pods_;  // whose ledger entry changed
  // The uid of the pod this backend deleted last under each name, until
  // another shows under it: a watch or a listing that lags may show it as
  // it was, even after its deletion's event.
  std::map<std::string, std::string> deleted_;
  std::map<int, Pending> pending_;  // by action id
  // Pending actions by the pod or node whose change can end them; those to
  // poll at the next look; by the moment they time out.
  std::map<std::string, std::set<int>> pod_waiters_;
  std::map<std::string, std::set<int>> node_waiters_;
  std::set<int> woken_;
  std::set<std::pair<Clock::time_point, int>> deadlines_;
  RemovalGuard guard_;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_KUBERNETES_BACKEND_H_
