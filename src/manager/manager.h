// The controller's manager (controller-runtime's Manager is the model):
// everything `migserve controller` runs besides parsing its flags. It
// reaches the API server, reads the target (a file or a ConfigMap), holds
// the leader lease, serves /metrics, /progress and /healthz, and runs the
// reconcile loop until it is told to stop, so that a test can run the whole
// controller in-process with a stop token.
#ifndef MIGSERVE_MANAGER_MANAGER_H_
#define MIGSERVE_MANAGER_MANAGER_H_

#include <atomic>
#include <functional>
#include <string>

#include "cluster/action.h"
#include "kube/kube_config.h"
#include "kube/leader_lease.h"
#include "kubernetes/kubernetes_backend.h"
#include "kubernetes/partition/partitioner.h"
#include "manager/target_source.h"
#include "util/log_sink.h"
#include "util/status_or.h"

namespace migserve::manager {

struct ManagerOptions {
  kube::KubeConfig config;  // its namespace_ holds the replica pods
  TargetOptions target;
  std::string journal = "migserve-journal.db";  // SQLite
  // Where set, the journal is this controller's own file there (named by
  // its lease identity), which begins as a copy of its predecessor's
  // (controller/journal_dir.h); `journal` is not read.
  std::string journal_dir;
  std::string metrics_address = "127.0.0.1";
  int metrics_port = 9090;  // 0: no health server
  bool once = false;        // one reconcile, then return its status
  // Take every pod annotated with the backend's owner name as one this
  // controller created (recorded in the journal) before the first
  // reconcile: pods of a migserve before format 4 journals, or of a journal
  // moved away. A journal upgraded from format 3 does it once by itself.
  bool adopt = false;
  // The backend's options; namespace_ and models are filled from the
  // config and the target.
  kubernetes::BackendOptions backend;
  // Who partitions the GPUs: the node agent (kAgent) or NVIDIA's DRA
  // driver through claims (kDra; refused, saying why, where its preflight
  // finds a problem). The GPU Operator's MIG manager is not one the
  // controller can act through.
  kubernetes::Partitioner partitioner = kubernetes::Partitioner::kAgent;
  // The --serving file the backend's spec came from ("" if none), named in
  // the message when no routes can be kept.
  std::string serving_file;
  bool leader_elect = true;
  kube::LeaseOptions lease;  // namespace and identity defaulted if empty
  // Each line the manager says (progress, warnings, errors), no newline.
  LogSink log = [](const std::string&) {};
};

// Runs the controller until `stop` turns true: waits for the lease (unless
// leader_elect is false), then reconciles the target, waits for it to
// change or for resync_s, and reconciles again. A newer target
// mid-transition is taken at once. With `once`, returns after one
// reconcile: OK at the target, else its error. Otherwise returns OK when
// stopped, and FailedPrecondition when it lost the lease (the process
// should exit and come back as a candidate); InvalidArgument or
// Unavailable when the target, the journal or the health server's address
// cannot be had.
Status RunManager(ManagerOptions options, const std::atomic<bool>& stop);

// Observes the cluster and plans the move to the target: writes nothing
// anywhere, neither a journal nor a Kubernetes object. The pods it counts
// as the controller's are those the controller would count: recorded in
// the journal (read only), or annotated where the controller would adopt
// them (`adopt`, a journal from before format 4). Logs a summary and
// returns the plan (checked safe in every order).
StatusOr<cluster::TransitionPlan> DryRun(ManagerOptions options);

}  // namespace migserve::manager

#endif  // MIGSERVE_MANAGER_MANAGER_H_
