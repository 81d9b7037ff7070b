#include "controller/route_keeper.h"

#include <fmt/format.h>

#include <algorithm>

#include "cluster/apply.h"
#include "cluster/routing.h"

namespace migserve::controller {
namespace {

using cluster::Action;

// Applies to `routed` the start of `a`, which may have begun on the cluster
// already (a restarted controller's action): the replica it removes is no
// longer routed either way.
void StartRouted(const Action& a, cluster::ClusterState* routed) {
  if (cluster::StartAction(a, routed).ok()) return;
  if (a.kind != cluster::ActionKind::kDelete &&
      a.kind != cluster::ActionKind::kMigrate) {
    return;
  }
  cluster::Slot* slot =
      routed->FindServing(a.at.gpu, a.at.instance, a.replica.service);
  if (slot != nullptr) slot->replica.reset();
}

}  // namespace

RouteKeeper::RouteKeeper(cluster::Router* router, Journal* journal, int version,
                         const cluster::TransitionPlan& plan)
    : router_(router), journal_(journal), version_(version), plan_(plan) {}

Status RouteKeeper::Begin(const cluster::ClusterState& observed,
                          const std::vector<const Action*>& started) {
  routed_ = observed;
  std::set<std::string> services;
  for (const auto& [service, capacity] : observed.Capacity()) {
    services.insert(service);
  }
  for (const Action& a : plan_.actions) services.insert(a.replica.service);
  for (const Action* a : started) StartRouted(*a, &routed_);
  where_.clear();
  for (const cluster::GpuState& g : routed_.gpus) {
    for (const cluster::Slot& s : g.slots) {
      if (s.replica) where_[s.replica->service].insert(g.id);
    }
  }
  return Sync(-1, services);
}

double RouteKeeper::RoutedAfter(const Action& a,
                                const cluster::ClusterState& seen) const {
  const std::string& service = a.replica.service;
  auto gpus = where_.find(service);
  if (gpus == where_.end()) return 0;
  return cluster::RoutedCapacity(cluster::RouteOf(
      routed_, service, gpus->second,
      [&](const cluster::GpuState& g, const cluster::Slot& s) {
        bool removed = (a.kind == cluster::ActionKind::kDelete ||
                        a.kind == cluster::ActionKind::kMigrate) &&
                       g.id == a.at.gpu && s.instance == a.at.instance;
        return !removed &&
               seen.FindServing(g.id, s.instance, service) != nullptr;
      }));
}

Status RouteKeeper::Starting(const Action& a,
                             const cluster::ClusterState& seen) {
  Prune(a.replica.service, seen);
  StartRouted(a, &routed_);
  Reindex(a);
  return Sync(a.id, {a.replica.service});
}

void RouteKeeper::Prune(const std::string& service,
                        const cluster::ClusterState& seen) {
  auto gpus = where_.find(service);
  if (gpus == where_.end()) return;
  const std::set<cluster::GpuId> was = gpus->second;
  for (const cluster::GpuId& id : was) {
    cluster::GpuState* g = routed_.FindGpu(id);
    if (g == nullptr) continue;
    for (cluster::Slot& s : g->slots) {
      if (s.replica && s.replica->service == service &&
          seen.FindServing(id, s.instance, service) == nullptr) {
        s.replica.reset();
      }
    }
    Reindex(service, id);
  }
}

Status RouteKeeper::Finished(const Action& a,
                             const cluster::ClusterState& seen) {
  MIGSERVE_RETURN_IF_ERROR(cluster::FinishAction(a, &routed_));
  Reindex(a);
  Prune(a.replica.service, seen);
  return Sync(a.id, {a.replica.service});
}

void RouteKeeper::Reindex(const Action& a) {
  if (a.replica.service.empty()) return;  // a repartition moves no replica
  for (const cluster::GpuId& id : {a.at.gpu, a.to.gpu}) {
    Reindex(a.replica.service, id);
  }
}

void RouteKeeper::Reindex(const std::string& service,
                          const cluster::GpuId& id) {
  const cluster::GpuState* g = routed_.FindGpu(id);
  bool serves = g != nullptr &&
                std::any_of(g->slots.begin(), g->slots.end(),
                            [&](const cluster::Slot& s) {
                              return s.replica && s.replica->service == service;
                            });
  if (serves) {
    where_[service].insert(id);
  } else {
    where_[service].erase(id);
  }
}

Status RouteKeeper::Sync(int action, const std::set<std::string>& services) {
  if (router_ == nullptr) return Status::Ok();
  for (const std::string& service : services) {
    if (service.empty()) continue;
    cluster::ServiceRoute route =
        cluster::RouteOf(routed_, service, where_[service]);
    StatusOr<bool> changed = router_->SetRoute(route);
    if (!changed.ok()) {
      return Status::Unavailable(
          fmt::format("routing {}: {}", service, changed.status().message()));
    }
    if (!*changed) continue;
    ++changes_;
    MIGSERVE_RETURN_IF_ERROR(journal_->RecordRoute(
        version_, {action, service, cluster::FormatRoute(route)}));
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> RepairRoutes(
    cluster::Router* router, const cluster::ClusterState& observed,
    const std::set<std::string>& services) {
  std::vector<std::string> repaired;
  if (router == nullptr) return repaired;
  const std::map<std::string, cluster::ServiceRoute> live =
      cluster::Routes(observed);
  for (const std::string& service : services) {
    if (service.empty()) continue;
    auto it = live.find(service);
    StatusOr<bool> changed = router->SetRoute(
        it != live.end() ? it->second : cluster::ServiceRoute{service, {}});
    if (!changed.ok()) {
      return Status::Unavailable(
          fmt::format("routing {}: {}", service, changed.status().message()));
    }
    if (*changed) repaired.push_back(service);
  }
  return repaired;
}

}  // namespace migserve::controller
