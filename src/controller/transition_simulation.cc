#include "controller/transition_simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "controller/controller.h"
#include "controller/degraded_target.h"
#include "controller/journal.h"
#include "util/tolerance.h"

namespace migserve::controller {
namespace {

// Seconds of the makespan during which a repartition ran, and during which
// only replica actions (create, delete, migrate) ran: the paper's split of
// a transition's time by component (fig:e2estack).
std::pair<double, double> TimeByComponent(
    const std::vector<cluster::TimelineEntry>& timeline) {
  // One sweep over the starts and ends in time order: between two moments
  // runs every action started at or before the first and ending after it.
  struct Edge {
    double time_s;
    int actions;       // +1 at a start, -1 at an end
    int repartitions;  // the same for repartitions
  };
  std::vector<Edge> edges;
  for (const auto& e : timeline) {
    int gpu = e.action.kind == cluster::ActionKind::kRepartition ? 1 : 0;
    edges.push_back({e.start_s, 1, gpu});
    edges.push_back({e.end_s, -1, -gpu});
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.time_s < b.time_s; });
  double repartition = 0, replicas = 0;
  int actions = 0, repartitions = 0;
  for (size_t k = 0; k < edges.size();) {
    double now = edges[k].time_s;
    for (; k < edges.size() && edges[k].time_s == now; ++k) {
      actions += edges[k].actions;
      repartitions += edges[k].repartitions;
    }
    if (k == edges.size()) break;
    double width = edges[k].time_s - now;
    if (repartitions > 0) {
      repartition += width;
    } else if (actions > 0) {
      replicas += width;
    }
  }
  return {repartition, replicas};
}

// Finished actions by kind, migrations split into local and remote.
std::map<std::string, int> CountActions(
    const std::vector<cluster::TimelineEntry>& timeline) {
  std::map<std::string, int> counts;
  for (const auto& e : timeline) {
    if (!e.ok) continue;
    std::string kind(cluster::KindName(e.action.kind));
    if (e.action.kind == cluster::ActionKind::kMigrate) {
      kind = e.local ? "local migrate" : "remote migrate";
    }
    ++counts[kind];
  }
  return counts;
}

// Each service's lowest capacity against its floor; a service is short
// when its lowest capacity fell below its floor, whatever the controller
// believed.
// The end state is checked against `end_goal`: the goal, or what a
// degraded target (after a loss) could reach.
void Verdict(const cluster::SimulatedCluster& sim, const TransitionGoal& goal,
             const TransitionGoal& end_goal, const Status& run,
             cluster::TransitionReport* report) {
  if (!run.ok()) report->problems.push_back(run.message());
  std::map<std::string, double> final_capacity = sim.state().Capacity();
  for (const auto& [service, lowest] : sim.min_capacity()) {
    double floor = goal.Floor(service);
    auto required = goal.required_after.find(service);
    double satisfaction = floor > 0 ? lowest / floor : 1;
    if (satisfaction < 1 - kRateTolerance) {
      report->short_services.push_back(service);
      report->problems.push_back(
          fmt::format("service {} dropped to {:.1f}% of {:.6g}", service,
                      100 * satisfaction, floor));
    }
    report->services.push_back(
        {service, floor, lowest, satisfaction, final_capacity[service],
         required == goal.required_after.end() ? 0 : required->second});
  }
  for (std::string& p : EndStateProblems(sim.state(), end_goal)) {
    report->problems.push_back(std::move(p));
  }
}

}  // namespace

StatusOr<Simulation> SimulateTransition(const cluster::ClusterState& current,
                                        const deployment::Deployment& target,
                                        const TransitionGoal& goal,
                                        const SimulationOptions& options) {
  MIGSERVE_RETURN_IF_ERROR(options.durations.Validate());
  MIGSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Journal> journal,
                            Journal::Open(options.journal));
  cluster::SimulatedCluster sim(current, options.durations, options.seed,
                                options.faults);
  ControllerOptions controller_options;
  controller_options.planner = options.planner;
  controller_options.progress = options.progress;
  Controller controller(&sim, journal.get(), controller_options);
  Simulation out;
  out.run = controller.Transition(target, goal);
  TransitionGoal end_goal = goal;
  cluster::TransitionReport& report = out.report;
  std::optional<DegradedTarget> degraded;
  if (!out.run.ok() && out.run.code() != Status::Code::kAborted) {
    degraded =
        FitTarget(sim.state(), target, controller.stats().goal.required_before);
  }
  if (degraded) {
    // The loss left a target that no longer fits: on to what does, as the
    // controller command's reconciler moves (reconciler.h).
    report.degraded = degraded->description;
    if (options.progress) {
      options.progress("controller: " + degraded->description +
                       "; moving to what fits");
    }
    end_goal = GoalKeeping(sim.state(), degraded->deployment,
                           controller.stats().goal.required_before);
    Controller recovery(&sim, journal.get(), controller_options);
    out.run = recovery.Transition(degraded->deployment, end_goal);
  }
  out.end = sim.state();

  report.seed = options.seed;
  report.actions = CountActions(sim.timeline());
  report.makespan_s = sim.now_s();
  report.planner_s = controller.stats().planner_s;
  std::tie(report.repartition_s, report.replicas_s) =
      TimeByComponent(sim.timeline());
  report.peak_gpus = sim.peak_gpus();
  report.plans = controller.stats().plans;
  report.survive_dropped = controller.stats().survive_dropped;
  report.final_gpus = out.end.UsedGpus();
  report.target_gpus = goal.target_gpus;
  report.timeline = cluster::ReportTimeline(sim.timeline());
  report.capacity_history = sim.capacity_history();
  Verdict(sim, goal, end_goal, out.run, &report);
  return out;
}

}  // namespace migserve::controller
