// The controller's router on Kubernetes (docs/serving.md): the route keepers
// the serving spec and the target's data plane call for, each given every
// route in turn:
//  - GatewayRouter (gateway_router.h) where the serving spec names a
//    gateway, for every router kind;
//  - ProxyRouter (proxy_router.h) where the data plane is migserve's proxy
//    (queueing::DataPlane::kProxy, router kind `proxy`).
// A new data plane is a keeper of its own and one case in the constructor.
#ifndef MIGSERVE_KUBERNETES_ROUTING_KUBERNETES_ROUTER_H_
#define MIGSERVE_KUBERNETES_ROUTING_KUBERNETES_ROUTER_H_

#include <memory>
#include <vector>

#include "cluster/router.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/router_options.h"

namespace migserve::kubernetes {

class KubernetesRouter : public Router {
 public:
  // `client` is not owned and outlives the router.
  KubernetesRouter(kube::KubeClient* client, const RouterOptions& options);

  // Whether any keeper runs (false: neither a gateway nor a proxy, and
  // SetRoute keeps nothing).
  bool KeepsRoutes() const { return !keepers_.empty(); }

  // Every keeper's SetRoute, gateway first; changed if any changed.
  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  std::vector<std::unique_ptr<Router>> keepers_;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_KUBERNETES_ROUTER_H_
