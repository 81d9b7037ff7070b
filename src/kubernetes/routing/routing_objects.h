// The Kubernetes objects that route a service's requests by capacity
// (routing.h, docs/serving.md): per routing group a Service that selects
// the group's replica pods by label, and per service a Gateway API
// HTTPRoute (gateway.networking.k8s.io/v1) attached to the serving spec's
// gateway whose backendRefs are the group Services, weighted by capacity.
// `export` writes them; the controller keeps them right through
// transitions (kubernetes_router.h).
#ifndef MIGSERVE_KUBERNETES_ROUTING_ROUTING_OBJECTS_H_
#define MIGSERVE_KUBERNETES_ROUTING_ROUTING_OBJECTS_H_

#include <map>
#include <string>

#include "cluster/routing.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/serving_spec.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

inline constexpr char kGatewayApi[] = "gateway.networking.k8s.io/v1";

// FailedPrecondition ("fenced: ...") if `live` (`what`, as last written)
// carries a newer epoch than `mine`: a controller replaced while it
// stalled must not write over its successor's routes.
Status CheckNotFenced(const nlohmann::json& live, long mine,
                      const std::string& what);

// The name of the Service that carries each routing group of a route: the
// group's label value (GroupName) -> the Service's name, its slot's name
// (SlotName) or, while another group holds that, its own group name.
using GroupServiceNames = std::map<std::string, std::string>;

// The names of `route`'s Services with no routes before it (export): in
// each slot the group of the largest weight (the first of equals) holds
// the slot's name, the others are on their group names.
GroupServiceNames SettledNames(const ServiceRoute& route);

// The Service named `name` of `group` of `service`: it selects the group's
// pods (the port is its template's).
// InvalidArgument where `service` is not a label value.
StatusOr<Json> GroupService(const std::string& service, const RouteGroup& group,
                            const std::string& name, const ServingSpec& spec);

// The HTTPRoute of `route`, its groups' Services named by `names`, whose
// service runs `model`: for a service
// that speaks the OpenAI API, requests under /v1 whose kModelHeader (the
// body's model, with body-based routing) or kServiceHeader names the
// service; else the spec's match. A route without groups has a rule
// without backends (the gateway answers 500). InvalidArgument where the
// service is not a label value.
StatusOr<Json> HttpRoute(const ServiceRoute& route, const std::string& model,
                         const GroupServiceNames& names,
                         const ServingSpec& spec);

// Returns InvalidArgument if `spec` has no gateway, or matches requests by
// model path while two of `models` (service -> model) that do not speak
// the OpenAI API share a model.
Status CheckRoutable(const std::map<std::string, std::string>& models,
                     const ServingSpec& spec);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_ROUTING_OBJECTS_H_
