#include "cluster/routing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace migserve::cluster {
namespace {

// Adds `replica` on `gpu` to `route`, in its group.
void Add(const GpuState& gpu, const Slot& slot, ServiceRoute* route) {
  const Replica& r = *slot.replica;
  RouteGroup probe = GroupOf(r, *gpu.model, slot.instance);
  probe.replicas = 0;
  auto it = std::lower_bound(route->groups.begin(), route->groups.end(), probe,
                             [](const RouteGroup& a, const RouteGroup& b) {
                               return KeyOf(a) < KeyOf(b);
                             });
  if (it == route->groups.end() || !SameGroup(*it, probe)) {
    it = route->groups.insert(it, probe);
  }
  it->credit = std::min(it->credit, r.credit);
  ++it->replicas;
  it->members.push_back({gpu.id, slot.instance.start});
}

// Adds every replica of `route`'s service on `gpu` that `keep` accepts (if
// given) to `route`.
void AddServed(
    const GpuState& gpu, ServiceRoute* route,
    const std::function<bool(const GpuState&, const Slot&)>& keep = nullptr) {
  for (const Slot& s : gpu.slots) {
    if (s.replica && s.replica->service == route->service &&
        (!keep || keep(gpu, s))) {
      Add(gpu, s, route);
    }
  }
}

// Weighs `route` and sorts each group's members: the route is then the
// same whatever order its replicas were added in.
void Finish(ServiceRoute* route) {
  WeighRoute(route);
  for (RouteGroup& g : route->groups) {
    std::sort(g.members.begin(), g.members.end());
  }
}

}  // namespace

long MilliRate(double throughput) { return std::lround(throughput * 1000); }

RouteGroup GroupOf(const Replica& replica, const mig::GpuModel& model,
                   const mig::Instance& instance) {
  return {model.name,
          model.profiles[instance.profile].name,
          replica.batch,
          replica.procs,
          1,
          replica.credit,
          0,
          {}};
}

void WeighRoute(ServiceRoute* route) {
  double largest = 0;
  for (const RouteGroup& g : route->groups) {
    largest = std::max(largest, g.replicas * g.credit);
  }
  double scale = 1000;
  if (largest * scale > kMaxRouteWeight) scale = kMaxRouteWeight / largest;
  for (RouteGroup& g : route->groups) {
    double capacity = g.replicas * g.credit;
    g.weight = capacity > 0 ? std::max(1L, std::lround(capacity * scale)) : 0;
    g.weight = std::min(g.weight, kMaxRouteWeight);
  }
}

double ReplicaWeight(long group_weight, size_t replicas) {
  return replicas > 0 ? static_cast<double>(group_weight) / replicas : 0;
}

std::map<std::string, ServiceRoute> Routes(const ClusterState& state) {
  std::map<std::string, ServiceRoute> routes;
  for (const GpuState& g : state.gpus) {
    for (const Slot& s : g.slots) {
      if (!s.replica) continue;
      ServiceRoute& route = routes[s.replica->service];
      route.service = s.replica->service;
      Add(g, s, &route);
    }
  }
  for (auto& [service, route] : routes) Finish(&route);
  return routes;
}

ServiceRoute RouteOf(const ClusterState& state, const std::string& service) {
  ServiceRoute route{service, {}};
  for (const GpuState& g : state.gpus) AddServed(g, &route);
  Finish(&route);
  return route;
}

ServiceRoute RouteOf(const ClusterState& state, const std::string& service,
                     const std::set<GpuId>& gpus) {
  return RouteOf(state, service, gpus, nullptr);
}

ServiceRoute RouteOf(
    const ClusterState& state, const std::string& service,
    const std::set<GpuId>& gpus,
    const std::function<bool(const GpuState&, const Slot&)>& keep) {
  ServiceRoute route{service, {}};
  for (const GpuId& id : gpus) {
    if (const GpuState* g = state.FindGpu(id)) AddServed(*g, &route, keep);
  }
  Finish(&route);
  return route;
}

double ReplicaLoad(const ServiceRoute& route, const RouteGroup& group,
                   double rate) {
  long total = 0;
  for (const RouteGroup& g : route.groups) total += g.weight;
  if (group.weight == 0 || total == 0) return 0;
  if (group.replicas == 0) return std::numeric_limits<double>::infinity();
  return rate * static_cast<double>(group.weight) / static_cast<double>(total) /
         group.replicas;
}

double RoutedCapacity(const ServiceRoute& route) {
  double capacity = std::numeric_limits<double>::infinity();
  bool weighted = false;
  for (const RouteGroup& g : route.groups) {
    if (g.weight == 0) continue;
    weighted = true;
    // The rate at which this group's replicas reach their throughput.
    double load_at_one = ReplicaLoad(route, g, 1.0);
    capacity = std::min(capacity, g.credit / load_at_one);
  }
  return weighted ? capacity : 0;
}

std::string FormatRoute(const ServiceRoute& route) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const RouteGroup& g : route.groups) {
    groups.push_back({{"gpu", g.gpu_model},
                      {"profile", g.profile},
                      {"batch", g.batch},
                      {"procs", g.procs},
                      {"replicas", g.replicas},
                      {"throughput", g.credit},
                      {"weight", g.weight}});
  }
  return nlohmann::ordered_json{{"service", route.service}, {"groups", groups}}
      .dump();
}

}  // namespace migserve::cluster
