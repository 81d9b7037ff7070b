// The route keeper for migserve's proxy (docs/serving.md, "The proxy"):
// writes the service's entry in the migserve-proxy-routes ConfigMap
// (proxy_routes.h), then waits until every Ready proxy pod reports that it
// applied that generation and drained the requests the old one held, so
// that a replica taken out of the route receives nothing once SetRoute
// returns.
#ifndef MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTER_H_
#define MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTER_H_

#include <map>
#include <string>
#include <utility>

#include "cluster/router.h"
#include "kube/kube_client.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/router_options.h"

namespace migserve::kubernetes {

class ProxyRouter : public Router {
 public:
  // `client` is not owned and outlives the router.
  ProxyRouter(kube::KubeClient* client, RouterOptions options);

  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  // The uid of each member's pod of `route` that the ledger says is the
  // controller's; none without a ledger.
  StatusOr<std::map<ReplicaSite, std::string>> OwnedUids(
      const ServiceRoute& route);
  // Writes the route into the proxy's ConfigMap if it changed and returns
  // the generation the proxies must reach, and whether it changed.
  StatusOr<std::pair<long, bool>> Write(const ServiceRoute& route);
  // Waits until every Ready proxy pod reports `generation`; returns
  // DeadlineExceeded naming those that do not after proxy_timeout_s.
  Status WaitForProxies(long generation);

  kube::KubeClient* client_;
  RouterOptions options_;
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTER_H_
