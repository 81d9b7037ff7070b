// Replay (`migserve replay`): the autoscaling policy run against a rate
// trace in simulated time, without a cluster. Every move is optimized
// transition-aware from the cluster as it is (`optimize --from`, milp) and
// executed by the controller on the simulated cluster, with its actions'
// durations; meanwhile the trace goes on. The result is measured against
// the trace: GPU-hours, minutes of any service's capacity below its
// observed rate, transitions; next to two baselines: static provisioning
// for each service's peak, and an oracle that re-optimizes every interval
// for its peak rates, moving for free.
#ifndef MIGSERVE_AUTOSCALE_REPLAY_H_
#define MIGSERVE_AUTOSCALE_REPLAY_H_

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autoscale/policy.h"
#include "autoscale/trace.h"
#include "cluster/simulated_cluster.h"
#include "cluster/survive_dropped.h"
#include "optimizer/options.h"
#include "profile/profile_table.h"
#include "util/log_sink.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::autoscale {

struct ReplayOptions {
  PolicyOptions policy;
  cluster::ActionDurations durations;
  optimizer::SolveOptions solve;  // of every milp run ...
  // ... but a move's (`optimize --from`): autoscale::SizerOptions'.
  int move_nodes = 2000;
  double move_time_limit_s = 10;
  double oracle_interval_s = 3600;  // 0: the policy's interval
  int gpus_per_node = 8;
  // The GPU budget (`replay --max-gpus`), the replayed cluster's GPUs:
  // each move is placed to hold few enough while it runs
  // (controller::GpusHeld); one that would need more than 90% of them goes
  // to the trace's peaks instead (what static provisioning serves), and
  // one that would still need more is not made (the policy holds; the
  // report counts it in over_budget). -1: the static peak provisioning's
  // GPUs; 0: none (a cluster of twice those).
  int max_gpus = -1;
  uint64_t seed = 1;  // of the action durations' jitter
  LogSink progress;   // may be empty
};

// One way of provisioning, measured against the trace.
struct ReplayRun {
  double gpu_hours = 0;
  // Minutes during which a service's capacity was below its observed rate,
  // summed over the services; and per service (only those short).
  double short_minutes = 0;
  std::map<std::string, double> short_minutes_by_service;
  int transitions = 0;
  int peak_gpus = 0;
};

// A move of the policy.
struct ReplayEvent {
  double time_s = 0;
  Move move = Move::kHold;
  std::string reason;
  int gpus_before = 0;
  int gpus_after = 0;
  int pod_starts = 0;
  double makespan_s = 0;
  std::string problem;  // the transition's, if it ended short of its target
  // Why the transition kept no survive promise the target makes.
  cluster::SurviveDropped survive_dropped;
};

// From time_s on: GPUs in use (a transition's peak while it runs) and each
// service's ready capacity.
struct ReplaySample {
  double time_s = 0;
  int gpus = 0;
  std::vector<double> capacity;  // per service of the report
};

struct ReplayReport {
  std::vector<std::string> services;  // the workload's, in its order
  double start_s = 0;
  double end_s = 0;
  ReplayRun policy;
  ReplayRun static_peak;
  ReplayRun oracle;
  std::vector<ReplayEvent> events;  // the policy's moves
  int declined = 0;     // down moves whose saving did not pay for their starts
  int max_gpus = 0;     // the budget replayed under (0: none)
  int over_budget = 0;  // moves not made: over the budget
  std::vector<ReplaySample> samples;  // the policy's cluster over time
};

// The most policy decisions (trace span / --interval), and oracle steps, a
// replay takes: a million, minutes of work on 2 cores.
inline constexpr double kMaxReplaySteps = 1e6;

// Replays `trace` for `workload`'s services (their SLOs and models; the
// trace gives their rates) with `profiles`. Returns InvalidArgument naming
// a service of the workload the trace lacks or one of the trace the
// workload lacks, or invalid options; an optimizer's error.
StatusOr<ReplayReport> Replay(const RateTrace& trace,
                              const workload::Workload& workload,
                              const profile::ProfileTable& profiles,
                              const ReplayOptions& options);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_REPLAY_H_
