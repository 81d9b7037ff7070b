// How `serve` sends a service's requests to its replicas (docs/capacity.md):
//   weighted           the routing objects' split (cluster/routing.h): smooth
//                      weighted round robin over the groups by their
//                      weights, round robin over a group's replicas;
//   round-robin        every replica in turn, whatever its capacity;
//   least-outstanding  the replica with the fewest requests queued or in a
//                      batch (ties: the first).
#ifndef MIGSERVE_SERVING_REQUEST_ROUTER_H_
#define MIGSERVE_SERVING_REQUEST_ROUTER_H_

#include <optional>
#include <string_view>
#include <vector>

#include "queueing/replica_queue.h"

namespace migserve::serving {

enum class RoutingPolicy { kWeighted, kRoundRobin, kLeastOutstanding };

std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name);

class RequestRouter {
 public:
  // `groups[g]` lists the indexes of group g's replicas; `weights[g]` its
  // weight (used by kWeighted only).
  RequestRouter(RoutingPolicy policy, std::vector<std::vector<int>> groups,
                std::vector<long> weights);

  // The replica that takes a request arriving at `t`; `queues` are the
  // replicas by index (least-outstanding advances them to `t`).
  int Pick(double t, std::vector<queueing::ReplicaQueue>* queues);

 private:
  RoutingPolicy policy_;
  std::vector<std::vector<int>> groups_;
  std::vector<long> weights_;
  long total_weight_ = 0;
  std::vector<long> current_;    // smooth weighted round robin state
  std::vector<size_t> next_in_;  // per group: its next replica
  std::vector<int> all_;         // every replica, in group order
  size_t next_ = 0;              // round robin over all_
};

}  // namespace migserve::serving

#endif  // MIGSERVE_SERVING_REQUEST_ROUTER_H_
