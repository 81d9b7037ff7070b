// The cluster as the backend's caches of nodes and pods show it (DESIGN 6),
// kept up to date object by object: a node's change costs its GPUs, a pod's
// its slot and the capacity of its service, so that an action event on a
// large cluster costs what changed, not the cluster. It holds what one look
// at every node and pod makes of them: a GPU per GPU its partition driver
// reports (partition/partition_driver.h; the backend reads them); a slot
// holds the replica of the one pod that claims it, and none
// where two claim it (one of them is not what the controller made: a forged
// or stray copy). Which pods claim a slot (Ready, this controller's, with
// readable labels) the backend decides.
#ifndef MIGSERVE_KUBERNETES_CLUSTER_BOOKS_H_
#define MIGSERVE_KUBERNETES_CLUSTER_BOOKS_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/capacity_books.h"
#include "cluster/cluster_state.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"
#include "util/log_sink.h"

namespace migserve::kubernetes {

// What a replica pod says it serves, and where.
struct PodClaim {
  GpuId gpu;
  std::string profile;  // its label (ProfileLabel) or name
  int start = 0;
  Replica replica;
};

class ClusterBooks {
 public:
  // `warn` (may be empty) hears what cannot be counted.
  explicit ClusterBooks(LogSink warn);

  // Node `name`'s GPUs as they are now, by device index; none: gone, no
  // longer selected, not reported or unreadable.
  void SetNode(const std::string& name, std::vector<GpuLayout> gpus);
  // Pod `name`'s claim as it is now; none: it claims no slot (gone, not
  // Ready, not the controller's).
  void SetPod(const std::string& name, std::optional<PodClaim> claim);

  const ClusterState& state() const { return state_; }
  const std::map<std::string, double>& capacity() const {
    return books_.capacity();
  }
  // Changes whenever GPUs leave or join.
  int gpus_version() const { return gpus_version_; }

 private:
  using SlotKey = std::tuple<GpuId, std::string, int>;  // gpu, profile, start
  static SlotKey KeyOf(const PodClaim& claim) {
    return {claim.gpu, claim.profile, claim.start};
  }
  // Sets the replica of slot `key` from the pods that claim it.
  void Settle(const SlotKey& key);
  // Settles every claimed slot of GPU `id`, then its capacity.
  void SettleGpu(const GpuId& id);
  void Warn(const std::string& message) const;

  LogSink warn_;
  ClusterState state_;
  CapacityBooks books_;
  int gpus_version_ = 0;
  std::map<std::string, PodClaim> claims_;              // by pod
  std::map<SlotKey, std::set<std::string>> claimants_;  // pods, by slot
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_CLUSTER_BOOKS_H_
