// The partition seam (docs/kubernetes.md, "Partition drivers"): how the
// controller's backend reads the MIG layouts of a node's GPUs, changes
// one GPU's, and asks for an instance in a replica's pod, whatever carries
// the change to the GPU. The node agent's annotations are one driver
// (agent_driver.h), Kubernetes DRA's claims the other (dra_driver.h). The
// backend knows only this interface: it reads a node's layouts from the
// node object its watch holds (and, where the driver watches more, again
// when the driver says the node's objects moved), starts a change and
// follows it with the ticket Start gave, and never sees how either is
// written.
#ifndef MIGSERVE_KUBERNETES_PARTITION_PARTITION_DRIVER_H_
#define MIGSERVE_KUBERNETES_PARTITION_PARTITION_DRIVER_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/gpu_id.h"
#include "kubernetes/cluster_model.h"
#include "mig/gpu_model.h"
#include "mig/reconfiguration.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

// One GPU of a node as its driver reports it.
struct GpuLayout {
  const mig::GpuModel* model = nullptr;
  mig::Layout layout;
  // The claim not migserve's ("NAMESPACE/NAME") holding a device of the
  // GPU that a repartition planned: the GPU is left out of the plans
  // (cluster::GpuState::held_by). "" where none is known.
  std::string held_by{};
};

// What a replica's pod asks for to get its instance: added to its serving
// container's resources, and to its pod spec.
struct PodDevice {
  nlohmann::ordered_json resources;
  nlohmann::ordered_json pod_fields;
};

class PartitionDriver {
 public:
  virtual ~PartitionDriver() = default;

  // Has `changed` called, from any thread, whenever something the driver
  // watches besides the node objects changes. The backend calls it once,
  // before anything else; a driver that watches nothing else ignores it.
  virtual void OnChange(std::function<void()> changed) { (void)changed; }
  // The Lease epoch of the leader this driver writes for, from now on: a
  // driver whose requests others carry out (the node agent's) sends it
  // with each, so that they refuse a replaced leader's (issue 91). Others
  // ignore it.
  virtual void SetLeaseEpoch(long epoch) { (void)epoch; }

  // Brings what the driver watches besides the node objects up to date and
  // returns the nodes whose layouts or changes under way may have moved
  // since the last call: the backend reads their layouts again and looks
  // at their changes. An error: what it watches cannot be read now.
  virtual StatusOr<std::set<std::string>> Sync() {
    return std::set<std::string>();
  }

  // The GPUs of node `name` (`node`: the object as the watch holds it), by
  // device index, with their models and layouts: none where the node
  // reports none yet; InvalidArgument naming the node where what it reports
  // cannot be read.
  virtual StatusOr<std::vector<GpuLayout>> Layouts(
      const std::string& name, const nlohmann::json& node) const = 0;

  // Asks for GPU `gpu`, of `model`, to change by `change`; returns the
  // ticket Check follows the change by.
  virtual StatusOr<std::string> Start(const GpuId& gpu,
                                      const mig::GpuModel& model,
                                      const mig::Reconfiguration& change) = 0;

  // How change `ticket` of GPU `gpu` stands, as `node` (its node object)
  // and what the driver watches show it, taking its next step where the
  // last one has ended: nullopt while under way, OK once done, Unavailable
  // with the driver's reason if it failed. An error: what the node shows
  // cannot be read (the caller looks again later).
  virtual StatusOr<std::optional<Status>> Check(const GpuId& gpu,
                                                const std::string& ticket,
                                                const nlohmann::json& node) = 0;

  // What a replica's pod on instance `at` asks for.
  virtual PodDevice ReplicaDevice(const InstanceRef& at) const = 0;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_PARTITION_DRIVER_H_
