// The partition seam (docs/kubernetes.md, "Partition drivers"): how the
// controller's backend reads the MIG layouts of a node's GPUs and changes
// one GPU's, whatever carries the change to the GPU. The node agent's
// annotations are the first driver (agent_driver.h); Kubernetes DRA is the
// next. The backend knows only this interface: it reads a node's layouts
// from the node object its watch holds, starts a change and follows it
// with the ticket Start gave, and never sees how either is written.
#ifndef MIGSERVE_CLUSTER_KUBERNETES_PARTITION_PARTITION_DRIVER_H_
#define MIGSERVE_CLUSTER_KUBERNETES_PARTITION_PARTITION_DRIVER_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/gpu_id.h"
#include "mig/gpu_model.h"
#include "mig/reconfiguration.h"
#include "util/status_or.h"

namespace migserve::cluster::kubernetes {

// One GPU of a node as its driver reports it.
struct GpuLayout {
  const mig::GpuModel* model = nullptr;
  mig::Layout layout;
};

class PartitionDriver {
 public:
  virtual ~PartitionDriver() = default;

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
  // shows it: nullopt while under way, OK once done, Unavailable with the
  // driver's reason if it failed. An error: what the node shows cannot be
  // read (the caller looks again later).
  virtual StatusOr<std::optional<Status>> Check(
      const GpuId& gpu, const std::string& ticket,
      const nlohmann::json& node) const = 0;
};

}  // namespace migserve::cluster::kubernetes

#endif  // MIGSERVE_CLUSTER_KUBERNETES_PARTITION_PARTITION_DRIVER_H_
