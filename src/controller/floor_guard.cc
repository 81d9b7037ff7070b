#include "controller/floor_guard.h"

#include <fmt/format.h>

#include <algorithm>

#include "cluster/apply.h"
#include "util/tolerance.h"

namespace migserve::controller {
namespace {

using cluster::Action;

// The throughput `a` would take from its service if it started now on
// `seen`: what its source instance serves there (nothing if that replica is
// gone already, as after a restart).
double LossOnSeen(const Action& a, const cluster::ClusterState& seen) {
  if (a.kind != cluster::ActionKind::kDelete &&
      a.kind != cluster::ActionKind::kMigrate) {
    return 0;
  }
  const cluster::Slot* slot =
      seen.FindServing(a.at.gpu, a.at.instance, a.replica.service);
  return slot == nullptr ? 0 : slot->replica->credit;
}

// The floor of `service` in force: the one `goal` sets, raised to what it
// has `ready` up to its floor under `promised` (CheckFloor).
double FloorInForce(const std::string& service, double ready,
                    const TransitionGoal& goal,
                    const TransitionGoal& promised) {
  return std::max(goal.Floor(service),
                  std::min(promised.Floor(service), ready));
}

double Ready(const std::map<std::string, double>& capacity,
             const std::string& service) {
  auto it = capacity.find(service);
  return it == capacity.end() ? 0 : it->second;
}

}  // namespace

Status CheckFloor(const Action& a, const cluster::ClusterState& seen,
                  const std::map<std::string, double>& capacity,
                  const std::vector<const Action*>& running,
                  const TransitionGoal& goal, const TransitionGoal& promised) {
  double loss = LossOnSeen(a, seen);
  if (loss <= 0) return Status::Ok();
  const std::string& service = a.replica.service;
  double ready = Ready(capacity, service);
  double left = ready - loss;
  for (const Action* r : running) {
    if (r->replica.service == service) left -= LossOnSeen(*r, seen);
  }
  double floor = FloorInForce(service, ready, goal, promised);
  if (left >= floor - kCapacityTolerance) return Status::Ok();
  return Status::Unavailable(fmt::format(
      "the cluster is not as the plan expects: action {} ({} of {}) would "
      "leave {} at {:.6g} req/s ({:.6g} ready), below its floor {:.6g}",
      a.id, cluster::KindName(a.kind), a.replica.service, service, left, ready,
      floor));
}

Status CheckRoutedFloor(const Action& a, const cluster::ClusterState& seen,
                        double routed,
                        const std::map<std::string, double>& capacity,
                        const TransitionGoal& goal,
                        const TransitionGoal& promised) {
  if (LossOnSeen(a, seen) <= 0) return Status::Ok();
  const std::string& service = a.replica.service;
  double ready = Ready(capacity, service);
  double floor = FloorInForce(service, ready, goal, promised);
  if (routed >= floor * (1 - 1e-4) - kCapacityTolerance) return Status::Ok();
  return Status::Unavailable(fmt::format(
      "the routes are not as the plan expects: action {} ({} of {}) would "
      "leave {} routed at {:.6g} req/s ({:.6g} ready), below its floor {:.6g}",
      a.id, cluster::KindName(a.kind), service, service, routed, ready, floor));
}

}  // namespace migserve::controller
