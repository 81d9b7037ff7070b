// What the controller moves to when the cluster can no longer hold its
// target (a node or GPU lost): the target's GPUs that fit what is left,
// chosen so that the most services keep their floor
// (docs/kubernetes.md, "Recovery after a loss").
#ifndef MIGSERVE_CONTROLLER_DEGRADED_TARGET_H_
#define MIGSERVE_CONTROLLER_DEGRADED_TARGET_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "deployment/deployment.h"

namespace migserve::controller {

struct DegradedTarget {
  // The target less the GPUs dropped, or the cluster as it is (`stays`); a
  // short service's required rate is lowered to what it keeps there.
  deployment::Deployment deployment;
  int dropped_gpus = 0;
  // The cluster as it is keeps more services at their floor than any part
  // of the target would: it stays (the deployment is the observed one).
  bool stays = false;
  // Services below their required rate, in the target's order.
  std::vector<std::string> short_services;

  // "the cluster cannot hold the target: dropped N of its M serving GPUs;
  // short: a (x of y req/s), ..." (or "every service keeps its rate"; or
  // "staying where it is: ..." when it stays).
  std::string description;
};

// Returns nothing if `observed` has, of every GPU model, at least as many
// GPUs as `target` serves on, or none at all of one (a target for another
// fleet, which the planner refuses, not a loss). Else drops as many serving
// GPUs of each model it lacks as it lacks, the choice that leaves the most
// services at their floor (min of what `before` says each must keep now and
// its target rate; a service `before` does not name: its target rate),
// then the most of the services' required rates served (each counted up to
// 1): a MILP solved within a second (of GPUs that give every service the
// same, the last in the target go). The target's layouts are kept, none
// are made anew (the controller has no profiles). Where `observed` itself
// keeps more services at their floor, it is the answer (`stays`).
std::optional<DegradedTarget> FitTarget(
    const cluster::ClusterState& observed, const deployment::Deployment& target,
    const std::map<std::string, double>& before = {});

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_DEGRADED_TARGET_H_
