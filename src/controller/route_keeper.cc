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

Status RouteKeeper::Starting(const Action& a) {
  StartRouted(a, &routed_);
  Reindex(a);
  return Sync(a.id, {a.replica.service});
}

Status RouteKeeper::Finished(const Action& a) {
  MIGSERVE_RETURN_IF_ERROR(cluster::FinishAction(a, &routed_));
  Reindex(a);
  return Sync(a.id, {a.replica.service});
}

void RouteKeeper::Reindex(const Action& a) {
  if (a.replica.service.empty()) return;  // a repartition moves no replica
  std::set<cluster::GpuId>& gpus = where_[a.replica.service];
  for (const cluster::GpuId& id : {a.at.gpu, a.to.gpu}) {
    const cluster::GpuState* g = routed_.FindGpu(id);
    bool serves =
        g != nullptr &&
        std::any_of(
            g->slots.begin(), g->slots.end(), [&](const cluster::Slot& s) {
              return s.replica && s.replica->service == a.replica.service;
            });
    if (serves) {
      gpus.insert(id);
    } else {
      gpus.erase(id);
    }
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
