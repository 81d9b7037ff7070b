// The controller's router on Kubernetes (docs/serving.md): keeps each
// service's route equal to the route the controller asks for, in the data
// planes it is given:
//  - a gateway (the serving spec names one): the service's HTTPRoute
//    (routing_objects.h), creating the group Services its backends name. The
//    route it last wrote is recorded on the HTTPRoute (annotation
//    migserve.io/route), so a restarted controller compares against the
//    cluster, not its memory: a route that already holds is not written
//    again. A group Service is deleted once neither the route it writes nor
//    the one that route replaces names it: the gateway has had a whole
//    route change to stop sending to it;
//  - the proxy (`router: proxy`): the service's entry in the
//    migserve-proxy-routes ConfigMap (proxy_routes.h), after which it waits
//    until every Ready proxy pod reports that it applied that generation and
//    drained the requests the old one held, so that a replica taken out of
//    the route receives nothing once SetRoute returns.
#ifndef MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_
#define MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_

#include <map>
#include <set>
#include <string>
#include <utility>

#include "cluster/kubernetes/serving_spec.h"
#include "cluster/router.h"
#include "kube/kube_client.h"

namespace migserve::cluster::kubernetes {

inline constexpr char kAnnotationRoute[] = "migserve.io/route";

struct RouterOptions {
  std::string namespace_ = "default";  // of the routes and group Services
  ServingSpec serving;                 // names the gateway
  // service -> DNN model, for the path match; a service not listed serves
  // the model of its name.
  std::map<std::string, std::string> models;
  bool proxy = false;           // keep the proxy's routes
  double proxy_timeout_s = 60;  // the longest to wait for the proxies
  double proxy_poll_s = 0.1;    // how often to look at them meanwhile
};

class KubernetesRouter : public Router {
 public:
  // `client` is not owned and outlives the router.
  KubernetesRouter(kube::KubeClient* client, RouterOptions options);

  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  const std::string& ModelOf(const std::string& service) const;
  StatusOr<bool> SetHttpRoute(const ServiceRoute& route);
  // Writes the route into the proxy's ConfigMap if it changed and returns
  // the generation the proxies must reach, and whether it changed.
  StatusOr<std::pair<long, bool>> SetProxyRoute(const ServiceRoute& route);
  // Waits until every Ready proxy pod reports `generation`; returns
  // DeadlineExceeded naming those that do not after proxy_timeout_s.
  Status WaitForProxies(long generation);

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

}  // namespace migserve::cluster::kubernetes

#endif  // MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_
