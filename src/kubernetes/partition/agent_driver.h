// The node agent's partition driver (mig_annotations.h): a node's layouts
// are its agent's layout annotation; a change is a request annotation on the
// node for the GPU, with a fresh nonce as its ticket, and has ended when the
// agent's status annotation for that GPU answers the same nonce. A replica
// asks NVIDIA's device plugin for a device of its profile.
#ifndef MIGSERVE_KUBERNETES_PARTITION_AGENT_DRIVER_H_
#define MIGSERVE_KUBERNETES_PARTITION_AGENT_DRIVER_H_

#include <string>
#include <vector>

#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"

namespace migserve::kubernetes {

class AgentDriver : public PartitionDriver {
 public:
  // `client` is not owned and outlives the driver.
  explicit AgentDriver(kube::KubeClient* client) : client_(client) {}

  StatusOr<std::vector<GpuLayout>> Layouts(
      const std::string& name, const nlohmann::json& node) const override;
  StatusOr<std::string> Start(const GpuId& gpu, const mig::GpuModel& model,
                              const mig::Reconfiguration& change) override;
  StatusOr<std::optional<Status>> Check(const GpuId& gpu,
                                        const std::string& ticket,
                                        const nlohmann::json& node) override;
  PodDevice ReplicaDevice(const InstanceRef& at) const override;
  void SetLeaseEpoch(long epoch) override { epoch_ = epoch; }

 private:
  kube::KubeClient* client_;
  int nonce_ = 0;   // the last nonce's count
  long epoch_ = 0;  // sent with each request (MigRequest::epoch)
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_AGENT_DRIVER_H_
