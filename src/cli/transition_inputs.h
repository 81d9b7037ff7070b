// What `plan` and `simulate` start from: the current deployment put on the
// cluster (with spare GPUs), the target, and the goal between them.
#ifndef MIGSERVE_CLI_TRANSITION_INPUTS_H_
#define MIGSERVE_CLI_TRANSITION_INPUTS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "cluster/cluster_state.h"
#include "controller/planner.h"
#include "controller/safety_checker.h"
#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::cli {

struct TransitionFlags {
  std::string from;
  std::string to;
  std::string inventory;
  int spare_gpus = 0;
  int nodes = 0;
  int gpus_per_node = 8;
  bool no_migrate = false;
  bool remote_migrate = false;
  std::string profiles;  // optional: check declared throughputs
};

struct TransitionInputs {
  deployment::Deployment from;
  deployment::Deployment to;
  cluster::ClusterState current;
  controller::TransitionGoal goal;
  controller::PlannerOptions planner;
};

// Adds --from, --to, --inventory, --spare-gpus, --nodes, --gpus-per-node,
// --no-migrate, --remote-migrate, -p.
void AddTransitionOptions(CLI::App* app, TransitionFlags* flags);

// Loads both deployments and builds the cluster. With --inventory: the
// fleet's GPUs, the current deployment placed on them (PlaceOnInventory).
// Otherwise: the current deployment's GPUs (on node-<id / gpus-per-node>
// where it names none), padded with idle GPUs to --nodes x --gpus-per-node,
// plus --spare-gpus idle GPUs of its model. Both deployments' replicas must
// serve services they list and, with -p, declare no more throughput than
// the profiles measured. Returns the first error, naming the file and field
// (or GPU and instance).
StatusOr<TransitionInputs> LoadTransition(const TransitionFlags& flags);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_TRANSITION_INPUTS_H_
