// What `simulate` found when it ran a transition on the simulated cluster
// (`simulate --report`, docs/formats.md), typed, with JSON both ways: the
// actions as they ran, each service's lowest capacity against its floor,
// and the verdict, which comes from the capacity the cluster measured at
// every change, never from the plan.
#ifndef MIGSERVE_CLUSTER_TRANSITION_REPORT_H_
#define MIGSERVE_CLUSTER_TRANSITION_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/simulated_cluster.h"
#include "cluster/survive_dropped.h"
#include "util/status_or.h"

namespace migserve::cluster {

// One action as it ran.
struct ReportedAction {
  int id = 0;
  std::string kind;  // KindName
  std::string gpu;   // GpuId::ToString
  double start_s = 0;
  double end_s = 0;
  bool ok = true;
  std::string text;  // Describe
  // Not for a repartition: the replica's service and instance.
  std::optional<std::string> service;
  std::optional<std::string> profile;
  std::optional<int> start;
  // A migrate's destination, and whether it stayed on its node.
  std::optional<std::string> to;
  std::optional<int> to_start;
  std::optional<bool> local;
};

// One service: its floor min(required before, required after), the lowest
// ready capacity the cluster had, their ratio, and its capacity at the end
// against its new requirement (requests/s).
struct ReportedService {
  std::string name;
  double floor = 0;
  double lowest = 0;
  double min_satisfaction = 1;
  double final_capacity = 0;
  double required = 0;
};

struct TransitionReport {
  std::string from;  // the deployment files
  std::string to;
  uint64_t seed = 1;
  // Finished actions by kind ("create", "delete", "local migrate", "remote
  // migrate", "repartition").
  std::map<std::string, int> actions;
  double makespan_s = 0;
  double planner_s = 0;      // wall-clock seconds planning
  double repartition_s = 0;  // of the makespan, while a repartition ran
  double replicas_s = 0;     // while only replica actions ran
  int peak_gpus = 0;
  int plans = 0;
  int final_gpus = 0;
  int target_gpus = 0;
  std::vector<ReportedService> services;
  std::vector<ReportedAction> timeline;
  std::vector<CapacitySample> capacity_history;
  std::vector<std::string> problems;  // empty: no problem found
  std::vector<std::string> short_services;
  // When a loss left a target the cluster cannot hold: what the controller
  // moved to instead (controller/degraded_target.h); "" otherwise.
  std::string degraded;
  // When the target promises survive but a plan could not keep it during
  // the transition: why.
  SurviveDropped survive_dropped;

  bool ok() const { return problems.empty(); }
};

// Returns every action of `timeline` as it ran.
std::vector<ReportedAction> ReportTimeline(
    const std::vector<TimelineEntry>& timeline);

// Returns the report as JSON (2-space indent, newline-terminated).
std::string FormatTransitionReport(const TransitionReport& report);

// Parses what FormatTransitionReport writes, read from `source`. Returns
// InvalidArgument naming the source and the field.
StatusOr<TransitionReport> ParseTransitionReport(const std::string& text,
                                                 const std::string& source);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_TRANSITION_REPORT_H_
