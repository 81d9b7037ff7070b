// Capacity-weighted routing (docs/serving.md): a service's requests go to
// its replicas in proportion to their capacity, so that no replica receives
// more than it can serve while the service's capacity covers its rate. The
// replicas of a service fall into groups of equal capacity (same GPU model,
// profile, batch, MPS processes and credit: a credit depends on the service's
// rate, so one profile may carry two credits during a transition); the
// gateway splits the service's
// requests over the groups by integer weights proportional to each group's
// capacity (replicas x credit), and each group spreads its share evenly
// over its ready replicas (a Kubernetes Service).
#ifndef MIGSERVE_CLUSTER_ROUTING_H_
#define MIGSERVE_CLUSTER_ROUTING_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/cluster_state.h"

namespace migserve::cluster {

// The largest weight Gateway API accepts on a backend.
inline constexpr long kMaxRouteWeight = 1000000;

// Where a routed replica sits: its GPU and its instance's first slice (what
// a proxy that addresses replicas one by one needs to find each of them).
struct ReplicaSite {
  GpuId gpu;
  int start = 0;
  auto operator<=>(const ReplicaSite&) const = default;
};

struct RouteGroup {
  std::string gpu_model;  // mig::GpuModel::name
  std::string profile;    // e.g. "1g.10gb"
  int batch = 0;
  int procs = 1;
  int replicas = 0;   // routed replicas
  double credit = 0;  // per replica, req/s (the group's smallest)
  long weight = 0;    // share of the service's requests
  // The routed replicas, sorted (a route built by hand may leave it empty).
  std::vector<ReplicaSite> members;
  bool operator==(const RouteGroup&) const = default;
};

struct ServiceRoute {
  std::string service;
  std::vector<RouteGroup>
      groups;  // sorted by (gpu_model, profile, batch, procs, credit)
  bool operator==(const ServiceRoute&) const = default;
};

// A credit as a group's key and name carry it: thousandths of a request per
// second.
long MilliRate(double throughput);

// A routing group's identity, the one every part of migserve groups
// replicas by: GPU model, profile, batch, MPS processes and credit (in
// thousandths of a request per second). Routes sort their groups by it;
// `serve` finds a replica's group by it, and a group's Kubernetes Service is
// named by it (kubernetes/names.h).
using GroupKey =
    std::tuple<const std::string&, const std::string&, int, int, long>;
inline GroupKey KeyOf(const RouteGroup& group) {
  return {group.gpu_model, group.profile, group.batch, group.procs,
          MilliRate(group.credit)};
}
// Whether replicas of groups `a` and `b` belong to one group.
inline bool SameGroup(const RouteGroup& a, const RouteGroup& b) {
  return KeyOf(a) == KeyOf(b);
}

// Returns the group `replica` at instance `instance` of a `model` GPU belongs
// to (replicas 1, weight 0).
RouteGroup GroupOf(const Replica& replica, const mig::GpuModel& model,
                   const mig::Instance& instance);

// Returns the route of `service` over the replicas of `state`, with weights
// (WeighRoute). A service without replicas gets a route without groups.
ServiceRoute RouteOf(const ClusterState& state, const std::string& service);
// The same over the replicas on `gpus` only (where the caller knows the
// service runs): the cost of those GPUs, not of the cluster.
ServiceRoute RouteOf(const ClusterState& state, const std::string& service,
                     const std::set<GpuId>& gpus);
// The same over those of its replicas on `gpus` that `keep` accepts (given
// the GPU and the replica's slot).
ServiceRoute RouteOf(
    const ClusterState& state, const std::string& service,
    const std::set<GpuId>& gpus,
    const std::function<bool(const GpuState&, const Slot&)>& keep);

// Returns the routes of every service that has a replica in `state`.
std::map<std::string, ServiceRoute> Routes(const ClusterState& state);

// Sets each group's weight proportional to its capacity: the capacity in
// thousandths of a request per second, scaled down so that no weight exceeds
// kMaxRouteWeight; a group with capacity gets at least 1.
void WeighRoute(ServiceRoute* route);

// The weight of each of a group's `replicas` when the group weighs
// `group_weight` (WeighRoute): the group's weight shared evenly, 0 for a
// group without replicas. The one replica weight of every data plane:
// `serve` and the proxy's nginx upstreams weigh each replica by it, an
// HTTPRoute each group's backend by `group_weight`, their sum.
double ReplicaWeight(long group_weight, size_t replicas);

// The largest request rate `route` carries with no replica above its
// credit: the gateway sends a group weight / total of the requests, and
// the group spreads them over its replicas. 0 if a weighted group has no
// replicas (its share of requests fails) or nothing is weighted.
double RoutedCapacity(const ServiceRoute& route);

// The requests per second each replica of `group` receives when `route`
// carries `rate` (infinite if the group has weight and no replica).
double ReplicaLoad(const ServiceRoute& route, const RouteGroup& group,
                   double rate);

// The route as compact JSON (what the journal records).
std::string FormatRoute(const ServiceRoute& route);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_ROUTING_H_
