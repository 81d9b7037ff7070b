// Runs one transition plan's actions through a ClusterBackend, as ninja's
// Builder runs its Plan through a CommandRunner: every action whose `after`
// are done starts, independent ones in parallel; each start and end is
// journaled; after a restart the journaled actions are told apart into
// those still running, those that visibly took effect, and those that never
// began (they start again). What may start, and what happens around each
// start and finish (routes), the executor asks of its hooks: it decides
// nothing about floors or routes itself.
#ifndef MIGSERVE_CONTROLLER_PLAN_EXECUTOR_H_
#define MIGSERVE_CONTROLLER_PLAN_EXECUTOR_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_backend.h"
#include "cluster/cluster_state.h"
#include "controller/journal.h"
#include "util/log_sink.h"
#include "util/progress_timer.h"

namespace migserve::controller {

class ExecutionHooks {
 public:
  virtual ~ExecutionHooks() = default;

  // Asked before anything changes and before each action starts. An error
  // stops the run: nothing more starts, the running actions end and are
  // journaled, and Run returns the error.
  virtual Status MayAct() = 0;
  // Told once, before the first start, of the cluster as observed and of
  // the journaled actions that started but are not done.
  virtual Status Begin(const cluster::ClusterState& observed,
                       const std::vector<const cluster::Action*>& started) = 0;
  // Asked before `a` starts, with the last observed cluster, its ready
  // capacity per service and the actions of a's service running now. An
  // error refuses the start and ends the run with it.
  virtual Status Guard(const cluster::Action& a,
                       const cluster::ClusterState& seen,
                       const std::map<std::string, double>& capacity,
                       const std::vector<const cluster::Action*>& running) = 0;
  // Told just before `a` starts (with the cluster Guard was asked on), and
  // once it has finished well (with the cluster as it is then).
  virtual Status Starting(const cluster::Action& a,
                          const cluster::ClusterState& seen) = 0;
  virtual Status Finished(const cluster::Action& a,
                          const cluster::ClusterState& seen) = 0;
};

struct ExecutorOptions {
  // Stops (returns Aborted) after this many actions have finished in one
  // Run, as if the process died there; -1: never. For crash tests.
  int stop_after = -1;
  LogSink progress;  // may be empty
  // A line "N of M actions done, K running" when an action finishes at
  // least this many seconds after the last such line.
  double progress_every_s = kProgressEveryS;
};

class PlanExecutor {
 public:
  // `backend` and `journal` are not owned and outlive the executor.
  PlanExecutor(cluster::ClusterBackend* backend, Journal* journal,
               ExecutorOptions options);

  // Runs the actions of `plan` (journaled as `version`) that `states` does
  // not have as done. Returns OK once every action is done; Unavailable
  // naming a failed action (journaled as failed) or a GPU the cluster lost;
  // Aborted when stop_after is reached; Internal if the plan cannot
  // progress; a hook's error as the hook returned it.
  Status Run(int version, const cluster::TransitionPlan& plan,
             const std::map<int, ActionState>& states, ExecutionHooks* hooks);

  // Actions this executor saw finish well.
  int actions_run() const { return actions_run_; }

 private:
  struct RunState;

  // Tells apart the journaled actions (`states`): done, still running, or
  // visibly taken effect (journaled done now); returns those started but not
  // done. Observes the cluster into `at`.
  StatusOr<std::vector<const cluster::Action*>> Resume(
      int version, const cluster::TransitionPlan& plan,
      const std::map<int, ActionState>& states, RunState* at);
  // Starts every action whose `after` are done and the hooks allow.
  Status StartReady(int version, const cluster::TransitionPlan& plan,
                    ExecutionHooks* hooks, RunState* at);

  cluster::ClusterBackend* backend_;
  Journal* journal_;
  ExecutorOptions options_;
  int actions_run_ = 0;
};

// Waits for every action `backend` runs and journals how each ended.
Status AwaitRunning(cluster::ClusterBackend* backend, Journal* journal,
                    int version);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_PLAN_EXECUTOR_H_
