// Each service's ready capacity in a cluster, kept up to date GPU by GPU:
// after a change to one GPU, Touch costs that GPU and the GPUs of the
// services it serves or served, not the whole cluster. The sums are made in
// GPU order, as ClusterState::Capacity makes them: the same to the bit.
// The books of every backend that keeps its cluster in memory (the
// simulated cluster, Kubernetes' watch-fed view).
#ifndef MIGSERVE_CLUSTER_CAPACITY_BOOKS_H_
#define MIGSERVE_CLUSTER_CAPACITY_BOOKS_H_

#include <map>
#include <set>
#include <string>

#include "cluster/cluster_state.h"

namespace migserve::cluster {

class CapacityBooks {
 public:
  // Brings the books in line with GPU `id` as `state` now has it (gone if
  // `state` has no such GPU); adds to `changed` (may be null) each service
  // it serves or served.
  void Touch(const ClusterState& state, const GpuId& id,
             std::set<std::string>* changed);
  // Touches every GPU the books hold or `state` has.
  void Rebuild(const ClusterState& state, std::set<std::string>* changed);

  // Per service with a ready replica, its summed throughput.
  const std::map<std::string, double>& capacity() const { return capacity_; }

 private:
  // Per GPU, each service's throughput there; per service, the same by GPU
  // (summed in GPU order into capacity_).
  std::map<GpuId, std::map<std::string, double>> on_gpu_;
  std::map<std::string, std::map<GpuId, double>> by_service_;
  std::map<std::string, double> capacity_;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_CAPACITY_BOOKS_H_
