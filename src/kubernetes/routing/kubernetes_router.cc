#include "kubernetes/routing/kubernetes_router.h"

#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/gateway_router.h"
#include "kubernetes/routing/proxy_router.h"

namespace migserve::kubernetes {

KubernetesRouter::KubernetesRouter(kube::KubeClient* client,
                                   const RouterOptions& options) {
  if (options.serving.gateway) {
    keepers_.push_back(std::make_unique<GatewayRouter>(client, options));
  }
  switch (options.plane) {
    case queueing::DataPlane::kGatewayOnly:
      break;
    case queueing::DataPlane::kProxy:
      keepers_.push_back(std::make_unique<ProxyRouter>(client, options));
      break;
  }
}

StatusOr<bool> KubernetesRouter::SetRoute(const ServiceRoute& route) {
  bool changed = false;
  for (const std::unique_ptr<Router>& keeper : keepers_) {
    MIGSERVE_ASSIGN_OR_RETURN(bool kept, keeper->SetRoute(route));
    changed = changed || kept;
  }
  return changed;
}

}  // namespace migserve::kubernetes
