// The state of a running cluster (DESIGN 6): nodes of GPUs, each GPU with a
// MIG layout, each instance with at most one replica.
#ifndef MIGSERVE_CLUSTER_CLUSTER_STATE_H_
#define MIGSERVE_CLUSTER_CLUSTER_STATE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/gpu_id.h"
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
  // Its p99 credit (docs/design.md, vocabulary): the req/s it is routed
  // and counted for. Files and annotations call it `throughput`.
  double credit = 0;
  double latency_ms = 0;
  std::string model = {};  // the DNN model it serves; empty: the service's
  bool operator==(const Replica&) const = default;

  // Returns true if this replica can stay where `want` is wanted: the same
  // service, credited with at least its credit (within 1e-6 req/s).
  bool Covers(const Replica& want) const;
};

// One instance of a GPU and the replica on it, if any.
struct Slot {
  mig::Instance instance;
  std::optional<Replica> replica;
};

struct GpuState {
  GpuId id;
  const mig::GpuModel* model = nullptr;  // its own geometry (a catalog's)
  std::vector<Slot> slots;               // sorted by instance
  // Who else holds a device of it ("NAMESPACE/NAME" of a DRA claim not
  // migserve's; "" where nobody does): a GPU that takes no new layout or
  // replica (controller/target_mapping.h).
  std::string held_by{};

  mig::Layout layout() const;
  // Returns the slot of `instance`, or null.
  Slot* Find(const mig::Instance& instance);
  const Slot* Find(const mig::Instance& instance) const;
  bool HasReplica() const;
  // Returns the summed credit of each service's replicas on this GPU.
  std::map<std::string, double> Capacity() const;
};

struct ClusterState {
  std::vector<GpuState> gpus;  // sorted by id

  // Returns the GPU with `id`, or null.
  GpuState* FindGpu(const GpuId& id);
  const GpuState* FindGpu(const GpuId& id) const;
  // Returns the slot of `instance` on GPU `gpu` if a replica of `service`
  // runs there, or null.
  Slot* FindServing(const GpuId& gpu, const mig::Instance& instance,
                    const std::string& service);
  const Slot* FindServing(const GpuId& gpu, const mig::Instance& instance,
                          const std::string& service) const;
  // Returns true if the GPUs are not all of one model.
  bool Mixed() const;
  // Sorts `gpus` by id.
  void Sort();
  // Returns the summed credit of each service's replicas.
  std::map<std::string, double> Capacity() const;
  // Returns the number of GPUs with at least one replica.
  int UsedGpus() const;
};

// How a deployment without nodes is put on a cluster.
struct PlacementOptions {
  int gpus_per_node = 8;
  int min_gpus = 0;  // pad with idle GPUs up to this many

  // Returns InvalidArgument naming the first option out of its range.
  Status Validate() const;
};

// Returns the model of GPU entry `g` of `deployment` (its own `gpu`, else
// the deployment's) from the catalog. Returns InvalidArgument naming the
// file and entry for an unknown model.
StatusOr<const mig::GpuModel*> DeployedGpuModel(
    const deployment::Deployment& deployment, size_t g);

// Returns the cluster a deployment describes, each GPU with its own model.
// A GPU's identity is its node and index; a GPU without a node is put on
// node-<id / gpus_per_node> at index id % gpus_per_node (UnplacedGpuId),
// one with a node but no index gets its rank by id among the node's GPUs.
// Padding GPUs (min_gpus) are idle, of the deployment's model, on
// node-<k>. Returns InvalidArgument naming the GPU entry for an unknown
// model or profile, an identity listed twice or an illegal layout.
StatusOr<ClusterState> ClusterFromDeployment(
    const deployment::Deployment& deployment,
    const PlacementOptions& placement);

// Adds `count` idle GPUs (no instances) of `model` on nodes named
// spare-<k>, `gpus_per_node` to a node.
void AddSpareGpus(int count, int gpus_per_node, const mig::GpuModel& model,
                  ClusterState* state);

// Returns the deployment the cluster holds: every GPU with its node, index
// and (in a mixed cluster) model, ids 0..n-1 in identity order.
deployment::Deployment ToDeployment(
    const ClusterState& state, const std::vector<workload::Service>& services);

// Returns the services a cluster serves as it is: each with its replicas'
// model and, as its throughput, the capacity it has now (latency unknown:
// 0). What `observe` writes, so that `plan --from` keeps each service at
// least at what it has. InvalidArgument if a service's credits sum past
// the most a rate may be.
StatusOr<std::vector<workload::Service>> ObservedServices(
    const ClusterState& state);

// The options under which the controller judges layouts: what the hardware
// allows (optional profiles on, no pre-R510 rule).
mig::MigOptions ControllerMigOptions();

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_CLUSTER_STATE_H_
