// Keeps each service's live route in line with its ready replicas through
// a transition (docs/serving.md): a replica is routed from the finish of
// its create or migrate until its delete or migrate starts, the moments at
// which the safety checker counts it, so the routed capacity is the checked
// capacity in every order. Every route that changed is journaled.
#ifndef MIGSERVE_CONTROLLER_ROUTE_KEEPER_H_
#define MIGSERVE_CONTROLLER_ROUTE_KEEPER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "cluster/router.h"
#include "controller/journal.h"

namespace migserve::controller {

class RouteKeeper {
 public:
  // `router` (null: nothing is routed, the replicas are still followed)
  // and `journal` are not owned and outlive the keeper; `version` is the
  // plan's in the journal; `plan` is not copied: it outlives the keeper.
  RouteKeeper(cluster::Router* router, Journal* journal, int version,
              const cluster::TransitionPlan& plan);

  // Routes the observed cluster's ready replicas less those whose removal
  // `started` already (a restarted controller's actions), for every
  // service the cluster or the plan names.
  Status Begin(const cluster::ClusterState& observed,
               const std::vector<const cluster::Action*>& started);
  // The capacity the route of a's service will carry once `a` starts
  // (cluster/routing.h, RoutedCapacity): its routed replicas that `seen`
  // still shows ready, less the one `a` removes.
  double RoutedAfter(const cluster::Action& a,
                     const cluster::ClusterState& seen) const;
  // Requests leave a replica before it goes, and leave every replica of
  // a's service that `seen` no longer shows ready (someone else deleted
  // it, or it failed) in the same write: the route moves off a thinned
  // group before the controller deletes the rest of it (issue 91).
  Status Starting(const cluster::Action& a, const cluster::ClusterState& seen);
  // Requests reach a replica once it is ready, unless `seen` shows it gone
  // already (evicted as it became ready): the route follows `seen` for
  // a's service, as at a start.
  Status Finished(const cluster::Action& a, const cluster::ClusterState& seen);

  // Routes this keeper changed.
  int changes() const { return changes_; }

 private:
  // Brings the live routes of `services` in line with routed_ and journals
  // each route that changed, for `action` (-1: none).
  Status Sync(int action, const std::set<std::string>& services);
  // Brings where_ in line with routed_ on the GPUs action `a` changes.
  void Reindex(const cluster::Action& a);
  // Takes out of routed_ the replicas of `service` that `seen` does not
  // show ready.
  void Prune(const std::string& service, const cluster::ClusterState& seen);
  // Brings where_[service] in line with routed_ on GPU `id`.
  void Reindex(const std::string& service, const cluster::GpuId& id);

  cluster::Router* router_;
  Journal* journal_;
  int version_;
  const cluster::TransitionPlan& plan_;
  cluster::ClusterState routed_;
  // Per service, the GPUs of routed_ that hold its replicas: a route is
  // built from its service's GPUs, not from every GPU at every action.
  std::map<std::string, std::set<cluster::GpuId>> where_;
  int changes_ = 0;
};

// Makes the live route of each of `services` the route of `observed` (the
// cluster as it is: its ready replicas), writing only those that differ:
// routes kept like pods between transitions (issue 91: a stale leader's
// route write that landed after its successor's transition, or a hand
// edit, was never repaired). Returns the services whose route it rewrote.
StatusOr<std::vector<std::string>> RepairRoutes(
    cluster::Router* router, const cluster::ClusterState& observed,
    const std::set<std::string>& services);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_ROUTE_KEEPER_H_
