// A transition run on the simulated cluster (`migserve simulate`): the
// journaled Controller moves the cluster to the target while the simulated
// cluster measures every service's ready capacity at every change; the
// report's verdict comes from those measurements, not from the plan.
#ifndef MIGSERVE_CONTROLLER_TRANSITION_SIMULATION_H_
#define MIGSERVE_CONTROLLER_TRANSITION_SIMULATION_H_

#include <cstdint>
#include <functional>
#include <string>

#include "cluster/simulated_cluster.h"
#include "cluster/transition_report.h"
#include "controller/planner.h"
#include "controller/safety_checker.h"
#include "deployment/deployment.h"
#include "util/log_sink.h"

namespace migserve::controller {

struct SimulationOptions {
  cluster::ActionDurations durations;
  cluster::Faults faults;
  uint64_t seed = 1;                 // of the duration jitter
  std::string journal = ":memory:";  // SQLite; a file resumes a plan
  PlannerOptions planner;
  LogSink progress;  // may be empty
};

struct Simulation {
  cluster::TransitionReport report;  // from and to are left empty
  cluster::ClusterState end;         // the cluster when it finished
  Status run;                        // what the controller returned
};

// Moves `current` to `target` under `goal` on a simulated cluster. A
// failed run is a result (Simulation::run, and the report's problems);
// returns InvalidArgument only for invalid durations and the journal's
// error if it cannot be opened.
StatusOr<Simulation> SimulateTransition(const cluster::ClusterState& current,
                                        const deployment::Deployment& target,
                                        const TransitionGoal& goal,
                                        const SimulationOptions& options);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_TRANSITION_SIMULATION_H_
