// The route keeper for a gateway (docs/serving.md, "Routing objects"):
// keeps each service's HTTPRoute (routing_objects.h) equal to the route the
// controller asks for, creating the group Services its backends name. A
// Service is named by its slot (names.h, SlotName), not its credit: when a
// credit changes, the slot's Service is pointed at the new group once the
// live route no longer sends to it, and the new group waits on its own
// group name until then. The
// route it last wrote is recorded on the HTTPRoute (annotation
// migserve.io/route), so a restarted controller compares against the
// cluster, not its memory: a route that already holds is not written again.
// A group Service is deleted once neither the route it writes nor the one
// that route replaces names it: the gateway has had a whole route change to
// stop sending to it.
#ifndef MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_
#define MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_

#include <map>
#include <set>
#include <string>

#include "cluster/router.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/router_options.h"
#include "kubernetes/routing/routing_objects.h"

namespace migserve::kubernetes {

inline constexpr char kAnnotationRoute[] = "migserve.io/route";

class GatewayRouter : public Router {
 public:
  // `client` is not owned and outlives the router; `options.serving` names
  // the gateway.
  GatewayRouter(kube::KubeClient* client, RouterOptions options);

  // Writes the route, conditional at the API server on the route being
  // as read (its epoch and recorded route); read again once if it was not.
  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  // One read and conditional write of the route (SetRoute's); Aborted
  // where the route changed between them.
  StatusOr<bool> WriteRoute(const ServiceRoute& route);
  std::string ServicesPath() const;
  // The group label the Service `name` selects ("" where there is none).
  StatusOr<std::string> SelectedGroup(const std::string& name);
  // The names of `route`'s Services, given the Services the live route
  // sends to (`referenced`): a slot's name stays with the group it selects
  // while the live route names it; a slot the live route does not name
  // goes to its group of the largest weight; the others are on their group
  // names.
  StatusOr<GroupServiceNames> NamesFor(const ServiceRoute& route,
                                       const std::set<std::string>& referenced);
  // Creates the Service `name` of `group`, or points it at `group`'s pods.
  Status EnsureService(const std::string& service, const RouteGroup& group,
                       const std::string& name);
  // The names of the backends an HTTPRoute object sends to.
  static std::set<std::string> BackendNames(const nlohmann::json& http_route);
  // Deletes the group Services of `service` whose names are not in `kept`.
  Status DeleteGroupServicesBut(const std::string& service,
                                const std::set<std::string>& kept);

  kube::KubeClient* client_;
  RouterOptions options_;
  // Group Services known to exist -> the group label each selects.
  std::map<std::string, std::string> selects_;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_
