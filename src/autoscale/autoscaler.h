// `migserve autoscale` (docs/autoscale.md): the closed loop on a live
// cluster. Every interval it observes each service's request rate and p99
// through Prometheus (autoscale/observer.h), lets the policy decide
// (autoscale/policy.h), and on a move writes the new target deployment,
// optimized transition-aware from the current target (`optimize --from`),
// to the file the controller follows (temp file, then rename). Dry-run
// decides and says so but writes nothing; while the pause file exists it
// observes and decides nothing. It serves its own /metrics and /healthz.
#ifndef MIGSERVE_AUTOSCALE_AUTOSCALER_H_
#define MIGSERVE_AUTOSCALE_AUTOSCALER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autoscale/observer.h"
#include "autoscale/policy.h"
#include "autoscale/prometheus_client.h"
#include "autoscale/sizer.h"
#include "deployment/deployment.h"
#include "profile/profile_table.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/mutex.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::autoscale {

// Where the target deployment JSON the controller follows lives (`controller
// --target` or `--target-configmap`): read as the current deployment,
// rewritten on each move. A write may refuse a target changed since its
// read (the round fails; the next one reads again).
struct TargetStore {
  std::string name;  // the file, or the ConfigMap and key, in messages
  std::function<StatusOr<std::string>()> read;
  std::function<Status(const std::string& text)> write;
};

// The target in file `path`, rewritten through a temp file and a rename.
TargetStore FileTarget(const std::string& path);

struct AutoscaleOptions {
  std::string prometheus;  // http://host:port[/prefix]
  TargetStore target;
  // Where the policy's state (policy_state.h) is kept across restarts:
  // read once at the start (none there: it starts afresh, and says so),
  // written when it changes. Unset: not kept.
  TargetStore state;
  PolicyOptions policy;
  ObserveOptions observe;
  SizerOptions sizer;
  // The GPU budget: no move whose lower bound, target or transition (the
  // GPUs it holds while it runs, GpusHeld) needs more; such a round holds
  // and says so (OverBudget). 0: none but the solver's limit
  // (sizer.solve.max_gpus, 100000), which only stops absurd rates.
  int max_gpus = 0;
  // The workload's version every target written says it came from
  // (summary.workload); none for a workload file.
  std::optional<deployment::WorkloadOrigin> origin;
  bool dry_run = false;
  std::string pause_file;  // "" : never paused
  std::string metrics_address = "127.0.0.1";
  int metrics_port = -1;  // -1: no server; 0: a free port
  // Each line it says (decisions with their reasons, problems), no newline.
  LogSink log = [](const std::string&) {};
  // Each decision and problem as a Kubernetes Event says it (`autoscale
  // --events-for` records them): its type, reason (one CamelCase word:
  // ScaledUp, ScaledDown, WouldMove, DownDeclined, OverBudget,
  // NotInWorkload, Paused, Resumed, NotObserved, RoundFailed; and from
  // RunAutoscaler WorkloadChanged, WorkloadInvalid) and message.
  // Services not observed are said once until what is missing changes; a pause
  // when it starts and when it ends.
  EventSink event = [](EventType, const std::string&, const std::string&) {};
};

// What one round did.
// kUnlisted: a move held because the target serves a service the workload
// lacks, whose replicas the move would delete.
enum class Round {
  kHold,
  kUp,
  kDown,
  kDeclined,
  kOverBudget,
  kUnlisted,
  kPaused,
  kError
};

class Autoscaler {
 public:
  // `workload`: the services, their SLOs, and the rates the target serves
  // unless the target says (a deployment states the rates it was made for:
  // an autoscaler that restarts goes on from its last move); not copied: it
  // outlives the autoscaler. Returns
  // InvalidArgument for bad options, a target that cannot be read or a
  // workload of more than one GPU type.
  static StatusOr<std::unique_ptr<Autoscaler>> Make(
      const workload::Workload& workload, const profile::ProfileTable& profiles,
      AutoscaleOptions options);

  // One round at Unix time `now_s`: observe, decide, move. An error (no
  // Prometheus, no deployment for the move, a target that cannot be
  // written) is logged and counted and returned; the loop goes on.
  StatusOr<Round> Step(double now_s);

  // Prometheus text of its own metrics; health: the last round's error.
  std::string Metrics() const;
  Status Health() const;
  const std::vector<double>& required() const { return policy_.required(); }

 private:
  Autoscaler(const workload::Workload& workload,
             const profile::ProfileTable& profiles,
             const deployment::Deployment& target, Sizer sizer,
             PrometheusClient prometheus, AutoscaleOptions options);
  StatusOr<Round> Move(double now_s, const Decision& decision,
                       const deployment::Deployment& current);
  // Says that the move `decision` needs `what`, over the budget: held.
  Round OverBudget(const Decision& decision, const std::string& what);
  // Recalls the policy's state from options_.state, if set and there.
  void Recall();
  // Writes the policy's state to options_.state if set and it changed.
  void Remember();
  // Logs "autoscale: MESSAGE" and says it as an event.
  void Say(EventType type, const char* reason, const std::string& message);

  const workload::Workload& workload_;
  // Checks what each replica of the target declares (ReadTarget).
  const profile::ProfileTable& profiles_;
  std::vector<std::string> names_;  // the workload's services
  Sizer sizer_;
  PrometheusClient prometheus_;
  AutoscaleOptions options_;
  Policy policy_;

  mutable Mutex mu_;  // guards what Metrics and Health read
  std::map<Round, long> rounds_ GUARDED_BY(mu_);
  // Latest rate per service, NaN if none.
  std::vector<double> observed_ GUARDED_BY(mu_);
  std::vector<double> p99_ms_ GUARDED_BY(mu_);
  std::vector<double> required_shown_ GUARDED_BY(mu_);
  std::vector<double> margins_shown_ GUARDED_BY(mu_);
  PolicyState remembered_;  // as last written to options_.state
  bool paused_ GUARDED_BY(mu_) = false;
  std::string last_error_ GUARDED_BY(mu_);
  // The services not observed when last said (NotObserved).
  std::vector<std::string> unobserved_said_;
};

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_AUTOSCALER_H_
