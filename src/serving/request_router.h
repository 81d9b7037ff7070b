// How `serve` sends a service's requests to its replicas (docs/capacity.md).
// A router kind's dispatch (queueing/router_kind.h):
//   proxies             `proxies` independent proxies, each request reaching
//                       one at random, each running smooth weighted round
//                       robin over every replica (cluster::ReplicaWeight);
//   group-then-replica  a group picked at random by weight per request, then
//                       round robin or least request inside the group
//                       (`in_group`);
//   replica             a replica picked at random by weight per request;
// and, for comparison:
//   weighted           smooth weighted round robin over the groups by their
//                      weights, round robin over a group's replicas;
//   round-robin        every replica in turn, whatever its capacity;
//   least-outstanding  the replica with the fewest requests queued or in a
//                      batch (ties: the first).
#ifndef MIGSERVE_SERVING_REQUEST_ROUTER_H_
#define MIGSERVE_SERVING_REQUEST_ROUTER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "queueing/replica_queue.h"
#include "queueing/router_kind.h"

namespace migserve::serving {

enum class RoutingPolicy {
  kProxies,
  kGroupThenReplica,
  kReplica,
  kWeighted,
  kRoundRobin,
  kLeastOutstanding
};

// The policy named `name`: a router kind's (its dispatch), weighted,
// round-robin or least-outstanding.
std::optional<RoutingPolicy> ParseRoutingPolicy(std::string_view name);
// Every name ParseRoutingPolicy takes: the router kinds', then the
// comparisons'.
std::vector<std::string> RoutingPolicyNames();
// The policy that models `router`.
RoutingPolicy PolicyOf(queueing::RouterKind router);

// How a gateway spreads a group's share over the group's replicas.
enum class InGroup { kRoundRobin, kLeastRequest };
std::optional<InGroup> ParseInGroup(std::string_view name);

struct RouterSetup {
  int proxies = 1;  // kProxies
  InGroup in_group = InGroup::kRoundRobin;
  uint64_t seed = 1;  // of the random picks
};

class RequestRouter {
 public:
  // `groups[g]` lists the indexes of group g's replicas; `weights[g]` its
  // weight (unused by round-robin and least-outstanding).
  RequestRouter(RoutingPolicy policy, std::vector<std::vector<int>> groups,
                std::vector<long> weights, const RouterSetup& setup = {});

  // The replica that takes a request arriving at `t`; `queues` are the
  // replicas by index (least-outstanding and least request advance them to
  // `t`).
  int Pick(double t, std::vector<queueing::ReplicaQueue>* queues);

 private:
  // Smooth weighted round robin (nginx's): every entry gains its weight, the
  // richest is picked and pays the total.
  struct Rotation {
    std::vector<double> weights;
    std::vector<double> current;
    double total = 0;
    size_t Next();
  };
  int Next(size_t group);
  int LeastOutstanding(const std::vector<int>& among, double t,
                       std::vector<queueing::ReplicaQueue>* queues) const;

  RoutingPolicy policy_;
  InGroup in_group_;
  std::vector<std::vector<int>> groups_;
  std::vector<int> all_;           // every replica, in group order
  Rotation over_groups_;           // kWeighted
  std::vector<Rotation> proxies_;  // kProxies: over all_
  std::vector<size_t> next_in_;    // per group: its next replica
  size_t next_ = 0;                // round robin over all_
  std::mt19937_64 rng_;
  std::discrete_distribution<int> group_pick_;    // kGroupThenReplica
  std::discrete_distribution<int> replica_pick_;  // kReplica: over all_
};

}  // namespace migserve::serving

#endif  // MIGSERVE_SERVING_REQUEST_ROUTER_H_
