// The controller (paper 4, 6): plans a transition, runs it through a
// ClusterBackend with independent actions in parallel, journals every step,
// resumes a journaled plan after a restart, and replans from the observed
// cluster when an action fails or a GPU is lost. With a Router it also keeps
// each service's requests routed by capacity (routing.h): a replica is
// routed from the finish of its create or migrate (it is ready) until its
// delete or migrate starts, the moments at which the safety checker counts
// it, so the routed capacity is the checked capacity in every order.
#ifndef MIGSERVE_CONTROLLER_CONTROLLER_H_
#define MIGSERVE_CONTROLLER_CONTROLLER_H_

#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster_backend.h"
#include "cluster/router.h"
#include "controller/journal.h"
#include "controller/plan_executor.h"
#include "controller/planner.h"
#include "controller/safety_checker.h"
#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "util/event.h"
#include "util/log_sink.h"
#include "util/progress_timer.h"

namespace migserve::controller {

struct ControllerOptions {
  PlannerOptions planner;
  int max_replans = 4;
  // Stops (returns Aborted) after this many actions have finished in this
  // call, as if the process died there; -1: never. For crash tests.
  int stop_after = -1;
  LogSink progress;  // may be empty
  // While a plan runs, a progress line "N of M actions done" when an action
  // finishes at least this many seconds after the last such line.
  double progress_every_s = kProgressEveryS;
  // Keeps routes; not owned; null: the controller routes nothing.
  cluster::Router* router = nullptr;
  // Asked before the controller changes anything (routes, then each
  // action); an error stops the transition there with Aborted: it starts
  // nothing more, waits for the running actions to end and journals them. The
  // controller command steps down this way when it loses its lease. Empty:
  // always allowed.
  std::function<Status()> may_act;
  // Asked with may_act: true once a newer target has replaced the one the
  // transition moves to. The transition then stops as on may_act's refusal
  // and returns Aborted with stats().superseded set; the caller moves on to
  // the newer target from what it observes (Reconciler). Empty: never.
  std::function<bool()> superseded;
  // Told what an operator should see as an event (a Kubernetes Event in the
  // controller command; reconciler.h): a warning "Degraded" when the cluster
  // cannot hold the target, a normal "Recovered" when it holds it again.
  // Empty: none.
  EventSink event;
};

struct TransitionStats {
  int plans = 0;          // plans made (a resumed plan is not counted)
  int actions_run = 0;    // actions this call saw finish
  double planner_s = 0;   // wall-clock seconds spent planning and checking
  int route_changes = 0;  // routes this call changed
  // Services a lost GPU left below their floor; replans keep what remains.
  std::vector<std::string> short_services;
  // The goal in force when the call returned: a resumed plan's journaled
  // one, lowered after a loss.
  TransitionGoal goal;
  bool superseded = false;  // stopped for a newer target
  // Why a plan of this call keeps no survive promise the target makes.
  cluster::SurviveDropped survive_dropped;
};

class Controller {
 public:
  Controller(cluster::ClusterBackend* backend, Journal* journal,
             ControllerOptions options = {})
      : backend_(backend), journal_(journal), options_(options) {}

  // Moves the cluster to `target` under `goal`. Resumes the journal's
  // unfinished plan if it is for the same target. On a failed action or a
  // lost GPU it replans from the observed cluster; a service the loss left
  // below its floor is named (progress, stats) and kept at what it has.
  // Returns OK when the cluster holds the target; Aborted when stop_after
  // hit; FailedPrecondition naming the service when no plan can keep it; the
  // backend's error when replans are exhausted.
  Status Transition(const deployment::Deployment& target,
                    const TransitionGoal& goal);

  const TransitionStats& stats() const { return stats_; }

 private:
  StatusOr<int> MakePlan(const deployment::Deployment& target,
                         const std::string& target_json, TransitionGoal* goal,
                         int first_id, cluster::TransitionPlan* plan);
  // Lowers the floor of services the observed cluster has below it.
  StatusOr<TransitionGoal> AfterLoss(const TransitionGoal& goal);
  // Runs the actions of `plan` that `states` does not have as done through
  // a PlanExecutor, with the floor guard (CheckFloor: level triggered, a
  // delete or migrate starts only if the last observed cluster keeps its
  // service at its floor under `goal`, whatever the journal says; else
  // Unavailable, and Transition replans from what it observes), MayAct and
  // the route keeper as its hooks.
  Status Execute(int version, const cluster::TransitionPlan& plan,
                 const std::map<int, ActionState>& states,
                 const TransitionGoal& goal);
  // The removal guard the backend asks before each write that takes a
  // replica away (cluster_backend.h): refused while settling_, else
  // CheckFloor against the goal in force on the cluster as the backend
  // sees it.
  Status GuardRemoval(
      const cluster::Action& a, const cluster::ClusterState& seen,
      const std::map<std::string, double>& capacity,
      const std::vector<const cluster::Action*>& removing) const;
  // options_.may_act's answer, an error as Aborted; Aborted too once
  // options_.superseded says so.
  Status MayAct();
  void Progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }

  class Hooks;

  cluster::ClusterBackend* backend_;
  Journal* journal_;
  ControllerOptions options_;
  TransitionStats stats_;
  // After a failed action or a loss, until the running actions have ended.
  bool settling_ = false;
  // The floors the transition's first plan was made for (Transition's goal,
  // or a resumed plan's journaled one): what a plan lowered after a loss
  // is raised back to as capacity returns (CheckFloor, AfterLoss).
  TransitionGoal promised_;
};

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_CONTROLLER_H_
