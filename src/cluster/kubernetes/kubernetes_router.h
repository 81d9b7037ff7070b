// The controller's router on Kubernetes (docs/serving.md): keeps each
// service's HTTPRoute (routing_objects.h) equal to the route the controller
// asks for, creating the group Services its backends name. The route it
// last wrote is recorded on the HTTPRoute (annotation migserve.io/route), so
// a restarted controller compares against the cluster, not its memory:
// a route that already holds is not written again.
#ifndef MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_
#define MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_

#include <map>
#include <set>
#include <string>

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
};

class KubernetesRouter : public Router {
 public:
  // `client` is not owned and outlives the router.
  KubernetesRouter(kube::KubeClient* client, RouterOptions options);

  StatusOr<bool> SetRoute(const ServiceRoute& route) override;

 private:
  Status EnsureService(const std::string& service, const RouteGroup& group);

  kube::KubeClient* client_;
  RouterOptions options_;
  std::set<std::string> services_;  // group Services known to exist
};

}  // namespace migserve::cluster::kubernetes

#endif  // MIGSERVE_CLUSTER_KUBERNETES_KUBERNETES_ROUTER_H_
