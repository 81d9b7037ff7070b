// The routes the proxies of the `proxy` router follow (docs/serving.md,
// "The proxy"): one ConfigMap, migserve-proxy-routes, whose data holds per
// service its route with every routed replica (`route.<service>`, JSON)
// and a `generation` that grows with every change. The controller writes it
// (kubernetes_router.h) and waits for the proxies; `migserve router`, one
// per proxy pod, reads it with the replica pods' addresses
// (proxy/control_plane.h) and reports on its own pod (annotation
// migserve.io/proxy-generation) the generation it applied and drained.
#ifndef MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTES_H_
#define MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTES_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "boundary/checked_name.h"
#include "cluster/routing.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/serving_spec.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

inline constexpr char kProxyRoutesName[] = "migserve-proxy-routes";
// The proxy's Deployment, Service and pods' name and component label.
inline constexpr char kProxyName[] = "migserve-proxy";
inline constexpr char kLabelComponent[] = "app.kubernetes.io/component";
inline constexpr char kProxyComponent[] = "proxy";
// The label that names the proxy's own objects in proxy.yaml (its
// Deployment, Service, disruption budget, account and Role), not the
// routes ConfigMap: an upgrade applies them by it and leaves the routes
// the controller keeps (docs/kubernetes.md, "Upgrade and uninstall").
inline constexpr char kLabelName[] = "app.kubernetes.io/name";
inline constexpr char kAnnotationProxyGeneration[] =
    "migserve.io/proxy-generation";
// The port the proxy listens on in its pod.
inline constexpr int kProxyPort = 8080;
// Where it serves gRPC (HTTP/2 without TLS), as Triton does.
inline constexpr int kProxyGrpcPort = 8001;
// Where its router serves /metrics and /healthz (deploy/monitoring's
// PodMonitor scrapes it).
inline constexpr int kProxyMetricsPort = 9090;
// The memory limit of the proxy's container (the router, nginx and its
// workers): what the proxy's bound on large request bodies is derived
// from (proxy::LargeBodiesAtOnce).
inline constexpr int kProxyMemoryLimitMiB = 256;

struct ProxyRoute {
  ServiceRoute route;  // with its members
  std::string model;   // requests to /v2/models/<model>/... are its
  // The uid of a member's pod where the controller owns it (its pod
  // ledger, pod_ledger.h): the proxy then takes that pod and no other for
  // the member, whatever labels others copy. A member without one is
  // matched by its pod's site labels.
  std::map<ReplicaSite, std::string> uids = {};
  // The Deployment that runs a member where export wrote it (no pod, so no
  // uid, exists then): the proxy takes a pod for the member only if its
  // controlling ReplicaSet is that Deployment's (`<owner>-<its
  // pod-template-hash>`), so a pod that copies a replica's labels gets
  // nothing.
  std::map<ReplicaSite, std::string> owners = {};
  // A service whose kind runs on vLLM (ServingSpec::EngineOf, as export's
  // template): the proxy carries the OpenAI API for it
  // (proxy::ProxyUpstream::openai); in the ConfigMap, "api": "openai".
  bool openai = false;
  // The names besides the service and its model that an OpenAI route's
  // replicas answer to, as they were told (ServingSpec::ServedNames: the
  // model's aliases); the proxy routes each to the service. In the
  // ConfigMap, "aliases" (left out where none).
  std::vector<ServedName> aliases = {};
  // An OpenAI route whose conversations keep to their replicas
  // (ServingSpec::KeepsConversations); in the ConfigMap, "affinity": true
  // (left out where false).
  bool affinity = false;
  bool operator==(const ProxyRoute&) const = default;
};

// Per service, the Deployment that runs each member (ProxyRoute::owners),
// as export names them.
using ReplicaOwners = std::map<std::string, std::map<ReplicaSite, std::string>>;

struct ProxyRoutes {
  long generation = 0;
  std::map<std::string, ProxyRoute> services;
  // The fencing token of the controller that wrote them last
  // (kAnnotationEpoch); 0: none.
  long epoch = 0;
  bool operator==(const ProxyRoutes&) const = default;
};

// `route` of a service serving `model` under `spec`: OpenAI where its kind
// runs on vLLM, with the aliases its replicas are told to answer to. No
// uids or owners yet.
ProxyRoute ProxyRouteOf(ServiceRoute route, const std::string& model,
                        const ServingSpec& spec);

// The routes of `state`'s services at generation 1, as export writes them
// and `router --render` reads them: each service's route (cluster::Routes)
// with its model from `models` (by service; a service not listed serves
// the model of its name); a service whose kind runs on vLLM (`spec`) is an
// OpenAI one. No uids: no controller has made the pods yet.
ProxyRoutes ProxyRoutesOf(const ClusterState& state,
                          const std::map<std::string, std::string>& models,
                          const ServingSpec& spec);

// The ConfigMap data key of `service`'s route.
std::string ProxyRouteKey(const std::string& service);

// `route` as the JSON the ConfigMap holds: {service, model, groups: [{gpu,
// profile, batch, procs, throughput, weight, members: [{node, gpu, start,
// uid, owner}]}]} (uid and owner where known).
std::string FormatProxyRoute(const ProxyRoute& route);

// The ConfigMap of `routes` in namespace `namespace_` (empty: none named).
nlohmann::json ProxyRoutesConfigMap(const ProxyRoutes& routes,
                                    const std::string& namespace_);

// Reads the generation out of the ConfigMap `object` (0 if it has none).
// Returns InvalidArgument if it is not a non-negative integer.
StatusOr<long> ParseProxyGeneration(const nlohmann::json& object);

// Reads the routes out of the ConfigMap `object`. Returns InvalidArgument
// naming the key and field at fault.
StatusOr<ProxyRoutes> ParseProxyRoutes(const nlohmann::json& object);

// The labels of the proxy's objects and pods: ManagedLabels and component
// proxy.
kube::Labels ProxyLabels();

// The label selector (URL-encoded query) of the proxy pods.
std::string ProxyPodQuery();

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_PROXY_ROUTES_H_
