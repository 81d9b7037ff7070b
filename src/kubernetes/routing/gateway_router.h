// The route keeper for a gateway (docs/serving.md, "Routing objects"):
// keeps each service's HTTPRoute (routing_objects.h) equal to the route the
// controller asks for, creating the group Services its backends name. The
// route it last wrote is recorded on the HTTPRoute (annotation
// migserve.io/route), so a restarted controller compares against the
// cluster, not its memory: a route that already holds is not written again.
// A group Service is deleted once neither the route it writes nor the one
// that route replaces names it: the gateway has had a whole route change to
// stop sending to it.
#ifndef MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_
#define MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_

#include <set>
#include <string>

#include "cluster/router.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/router_options.h"

namespace migserve::kubernetes {

inline constexpr char kAnnotationRoute[] = "migserve.io/route";

class GatewayRouter : public Router {
 public:
  // `client` is not owned and outlives the router; `options.serving` names
  // the gateway.
  GatewayRouter(kube::KubeClient* client, RouterOptions options);

  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  Status EnsureService(const std::string& service, const RouteGroup& group);
  // The names of the backends an HTTPRoute object sends to.
  static std::set<std::string> BackendNames(const nlohmann::json& http_route);
  // Deletes the group Services of `service` whose names are not in `kept`.
  Status DeleteGroupServicesBut(const std::string& service,
                                const std::set<std::string>& kept);

  kube::KubeClient* client_;
  RouterOptions options_;
  std::set<std::string> services_;  // group Services known to exist
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_GATEWAY_ROUTER_H_
