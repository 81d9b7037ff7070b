#include "cluster/capacity_books.h"

namespace migserve::cluster {

void CapacityBooks::Touch(const ClusterState& state, const GpuId& id,
                          std::set<std::string>* changed) {
  const GpuState* g = state.FindGpu(id);
  std::map<std::string, double> now =
      g != nullptr ? g->Capacity() : std::map<std::string, double>();
  std::map<std::string, double>& before = on_gpu_[id];
  std::set<std::string> services;
  for (const auto& [service, value] : before) services.insert(service);
  for (const auto& [service, value] : now) services.insert(service);
  for (const std::string& service : services) {
    if (changed != nullptr) changed->insert(service);
    std::map<GpuId, double>& gpus = by_service_[service];
    auto it = now.find(service);
    if (it == now.end()) {
      gpus.erase(id);
    } else {
      gpus[id] = it->second;
    }
    if (gpus.empty()) {
      by_service_.erase(service);
      capacity_.erase(service);
      continue;
    }
    // In GPU order, as ClusterState::Capacity sums: the same to the bit.
    double sum = 0;
    for (const auto& [gpu, value] : gpus) sum += value;
    capacity_[service] = sum;
  }
  if (now.empty()) {
    on_gpu_.erase(id);
  } else {
    before = std::move(now);
  }
}

void CapacityBooks::Rebuild(const ClusterState& state,
                            std::set<std::string>* changed) {
  std::set<GpuId> ids;
  for (const auto& [id, services] : on_gpu_) ids.insert(id);
  for (const GpuState& g : state.gpus) ids.insert(g.id);
  for (const GpuId& id : ids) Touch(state, id, changed);
}

}  // namespace migserve::cluster
