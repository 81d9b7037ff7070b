// The state of a running cluster (DESIGN 6): nodes of GPUs, each GPU with a
// MIG layout, each instance with at most one replica.
#ifndef MIGSERVE_CLUSTER_CLUSTER_STATE_H_
#define MIGSERVE_CLUSTER_CLUSTER_STATE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "mig/layout.h"
#include "util/status_or.h"

namespace migserve::cluster {

// A serving process of one service on one instance.
struct Replica {
  std::string service;
  int batch = 0;
  int procs = 1;
  double throughput = 0;
  double latency_ms = 0;
  bool operator==(const Replica&) const = default;
};

// One instance of a GPU and the replica on it, if any.
struct Slot {
  mig::Instance instance;
  std::optional<Replica> replica;
};

struct GpuState {
  int id = 0;
  std::string node;
  std::vector<Slot> slots;  // sorted by instance

  mig::Layout layout() const;
  // Returns the slot of `instance`, or null.
  Slot* Find(const mig::Instance& instance);
  const Slot* Find(const mig::Instance& instance) const;
  bool HasReplica() const;
};

struct ClusterState {
  std::vector<GpuState> gpus;  // sorted by id

  // Returns the GPU with `id`, or null.
  GpuState* FindGpu(int id);
  const GpuState* FindGpu(int id) const;
  // Returns the summed throughput of each service's replicas.
  std::map<std::string, double> Capacity() const;
  // Returns the number of GPUs with at least one replica.
  int UsedGpus() const;
};

// How a deployment without nodes is put on a cluster.
struct PlacementOptions {
  int gpus_per_node = 8;
  int min_gpus = 0;  // pad with idle GPUs up to this many
};

// Returns the cluster a placed deployment describes. GPUs without a node are
// put on node-<id / gpus_per_node>. Returns InvalidArgument naming the GPU
// for an unknown profile, a duplicated id or an illegal layout.
StatusOr<ClusterState> ClusterFromDeployment(
    const deployment::Deployment& deployment, const mig::GpuModel& gpu,
    const PlacementOptions& placement);

// Adds `count` idle GPUs (no instances) with fresh ids on nodes named
// spare-<k>, `gpus_per_node` to a node.
void AddSpareGpus(int count, int gpus_per_node, ClusterState* state);

// Returns the deployment the cluster holds: every GPU with its id and node.
deployment::Deployment ToDeployment(
    const ClusterState& state, const mig::GpuModel& gpu,
    const std::vector<workload::Service>& services);

// The options under which the controller judges layouts: what the hardware
// allows (optional profiles on, no pre-R510 rule).
mig::MigOptions ControllerMigOptions();

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_CLUSTER_STATE_H_
