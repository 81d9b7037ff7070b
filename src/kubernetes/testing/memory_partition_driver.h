// A partition driver in memory, for tests of the backend's partition seam:
// every node reports `layouts` whatever its annotations, a change is
// recorded and ends when the test says so. It shows that the backend reads
// and changes layouts only through the seam (a second driver, such as DRA's,
// plugs in the same way).
#ifndef MIGSERVE_KUBERNETES_TESTING_MEMORY_PARTITION_DRIVER_H_
#define MIGSERVE_KUBERNETES_TESTING_MEMORY_PARTITION_DRIVER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"

namespace migserve::kubernetes {

class MemoryPartitionDriver : public PartitionDriver {
 public:
  StatusOr<std::vector<GpuLayout>> Layouts(
      const std::string& name, const nlohmann::json& node) const override {
    (void)node;
    auto it = layouts.find(name);
    if (it == layouts.end()) return std::vector<GpuLayout>();
    return it->second;
  }
  StatusOr<std::string> Start(const GpuId& gpu, const mig::GpuModel& model,
                              const mig::Reconfiguration& change) override {
    (void)model;
    started.push_back({gpu, change});
    return "ticket-" + std::to_string(started.size());
  }
  StatusOr<std::optional<Status>> Check(const GpuId& gpu,
                                        const std::string& ticket,
                                        const nlohmann::json& node) override {
    (void)gpu;
    (void)node;
    auto it = outcomes.find(ticket);
    if (it == outcomes.end()) return std::optional<Status>();
    return std::optional<Status>(it->second);
  }

  PodDevice ReplicaDevice(const InstanceRef& at) const override {
    (void)at;
    return {};
  }

  std::map<std::string, std::vector<GpuLayout>> layouts;  // by node
  std::vector<std::pair<GpuId, mig::Reconfiguration>> started;
  std::map<std::string, Status> outcomes;  // by ticket: ended
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_TESTING_MEMORY_PARTITION_DRIVER_H_
