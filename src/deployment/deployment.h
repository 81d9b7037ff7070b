// Deployment: GPU configs with, once placed, GPU ids and nodes (DESIGN 3).
// This is the JSON-facing form, with names rather than indexes.
#ifndef MIGSERVE_DEPLOYMENT_DEPLOYMENT_H_
#define MIGSERVE_DEPLOYMENT_DEPLOYMENT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deployment/gpu_config.h"
#include "mig/gpu_model.h"
#include "queueing/router_kind.h"
#include "workload/workload.h"

namespace migserve::deployment {

struct PlacedInstance {
  std::string profile;
  int start = 0;
  std::optional<std::string> service;  // nullopt: idle
  int batch = 0;                       // 0: not given
  int procs = 1;
  double credit = 0;  // its p99 credit, req/s (the file's `throughput`)
  double latency_ms = 0;
};

struct DeployedGpu {
  int id = 0;
  std::optional<std::string> node;  // absent before placement
  std::optional<int> index;         // device index on the node, once placed
  // The GPU model, in a mixed fleet; absent: the deployment's `gpu`.
  std::optional<std::string> gpu;
  std::vector<PlacedInstance> instances;

  // Returns true if an instance serves a replica.
  bool Serving() const;
};

// What a solve found (HiGHS's model status): a result, not a failure.
enum class SolveStatus {
  kOptimal,      // proven to use the fewest GPUs
  kFeasible,     // satisfies every service; optimality not proven
  kTimeLimit,    // stopped by the time limit with a feasible answer
  kInterrupted,  // stopped by a signal (util/interrupt.h) with the best so far
  kInfeasible,   // the algorithm cannot serve the workload under its rules
};

// Returns "optimal", "feasible", "time_limit", "interrupted" or
// "infeasible".
std::string_view SolveStatusName(SolveStatus status);
// The status of that name, or nullopt.
std::optional<SolveStatus> ParseSolveStatus(std::string_view name);

// What a deployment costs to reach from a running cluster.
struct TransitionCost {
  int gpus = 0;                // GPUs of the deployment
  int pod_starts = 0;          // replicas it starts
  int repartitioned_gpus = 0;  // GPUs whose layout it changes
  int kept_replicas = 0;       // replicas that stay where they are
};

// What a transition-aware optimization (optimize --from) reports.
struct TransitionSummary {
  TransitionCost cost;           // of this deployment
  TransitionCost plain_optimum;  // of the plain optimum, placed on the cluster
  bool plain_placed = false;     // this deployment is that placed optimum
  double starts_bound = 0;       // the proven least pod starts
  int extra_gpus = 0;            // GPUs above the fewest it could use
  int nodes = 0;                 // the transition search's nodes
};

// The workload a deployment was made from where that is a resource whose
// generation says which version (a ServingWorkload the autoscaler follows:
// `autoscale --workload-resource`).
struct WorkloadOrigin {
  std::string name;          // "NAMESPACE/NAME"
  long long generation = 0;  // its metadata.generation
  bool operator==(const WorkloadOrigin&) const = default;
};

// What the algorithm that made the deployment reports. `extra` holds the
// algorithm's own statistics (an object; docs/formats.md), written after
// the fixed fields and kept as read; nothing reads them back by key.
struct Summary {
  std::string algorithm;
  int gpus = 0;
  SolveStatus status = SolveStatus::kFeasible;
  std::optional<int> lower_bound;
  double seconds = 0;
  // Write the wall-clock figures (`seconds`, milp's `phase_seconds`): off,
  // the file is the same for the same inputs on any machine, so a target
  // can be diffed (optimize --timings; a file read with them keeps them).
  bool timings = false;
  // The router the credits assume (workload.router; absent in deployments
  // made before routers were part of the capacity model).
  std::optional<queueing::RouterKind> router;
  std::optional<TransitionSummary> transition;
  std::optional<WorkloadOrigin> workload;
  nlohmann::json extra = nlohmann::json::object();
};

struct Deployment {
  std::string source;  // file it came from, for messages
  std::string gpu;
  std::vector<workload::Service> services;
  std::vector<DeployedGpu> gpus;
  // The workload's survive: what the deployment promises after a loss, and
  // what a transition to it keeps after one (docs/controller.md).
  std::optional<workload::Survive> survive;
  std::optional<Summary> summary;

  // Returns the number of GPUs that serve at least one replica.
  int UsedGpus() const;
  // Returns true if every GPU names its node and index.
  bool Placed() const;
  // Returns the model name of GPU entry `g`: its own, else `gpu`.
  const std::string& GpuModelOf(size_t g) const;
  // The services some instance serves, each once, sorted.
  std::vector<std::string> ServedServices() const;
  // Per name of `services`: the summed credit of its instances
  // (req/s; 0 for a service the deployment does not serve).
  std::vector<double> CreditedRates(
      const std::vector<std::string>& services) const;
  // The data plane of the router its credits assume (summary.router;
  // queueing/router_kind.h): kGatewayOnly where the summary names none.
  queueing::DataPlane Plane() const;
};

// GPUs per node of an unplaced deployment, where a command is not told
// otherwise (--gpus-per-node).
inline constexpr int kUnplacedGpusPerNode = 8;

// The node that GPU `id` of an unplaced deployment is on:
// node-<id / gpus_per_node>.
std::string UnplacedNode(int id, int gpus_per_node = kUnplacedGpusPerNode);

// Returns the deployment of `configs` for `workload`, GPU ids 0..n-1 and no
// nodes; each instance carries the capacity row its service uses there.
Deployment MakeDeployment(const workload::Workload& workload,
                          const mig::GpuModel& gpu,
                          const workload::CapacityMatrix& caps,
                          const std::vector<GpuConfig>& configs);

}  // namespace migserve::deployment

#endif  // MIGSERVE_DEPLOYMENT_DEPLOYMENT_H_
