// What `export` writes for `router: proxy` (proxy.yaml, docs/serving.md,
// "The proxy"): the migserve-proxy Deployment (`migserve router` running
// nginx, one pod per proxy instance the credits count), its Service, the
// routes ConfigMap (proxy_routes.h) at generation 1 and the service
// account and Role the router needs to read pods and the routes and to
// report on its own pod.
#ifndef MIGSERVE_KUBERNETES_ROUTING_PROXY_OBJECTS_H_
#define MIGSERVE_KUBERNETES_ROUTING_PROXY_OBJECTS_H_

#include <map>
#include <string>

#include "cluster/cluster_state.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/routing/proxy_routes.h"
#include "kubernetes/serving_spec.h"

namespace migserve::kubernetes {

struct ProxyExport {
  int replicas = 2;                       // proxy instances (router_replicas)
  std::string image = "migserve:0.18.0";  // holds migserve and nginx
};

// The proxy objects of `state`'s services, in the serving spec's namespace;
// `models` maps each service to the DNN model its requests name, `owners`
// each member to the Deployment export wrote for it (the routes name it).
std::string ProxyObjects(const ClusterState& state,
                         const std::map<std::string, std::string>& models,
                         const ServingSpec& spec, const ProxyExport& proxy,
                         const ReplicaOwners& owners);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_PROXY_OBJECTS_H_
