#include "kubernetes/routing/routing_objects.h"

#include <fmt/format.h>

#include "boundary/checked_name.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {

GroupServiceNames SettledNames(const ServiceRoute& route) {
  GroupServiceNames names;
  std::map<std::string, const RouteGroup*> holders;  // slot -> its group
  for (const RouteGroup& g : route.groups) {
    if (g.weight <= 0) continue;
    const RouteGroup*& holder = holders[SlotName(route.service, g)];
    if (holder == nullptr || g.weight > holder->weight) holder = &g;
  }
  for (const RouteGroup& g : route.groups) {
    if (g.weight <= 0) continue;
    std::string slot = SlotName(route.service, g);
    names[GroupName(route.service, g)] =
        holders[slot] == &g ? slot : GroupName(route.service, g);
  }
  return names;
}

StatusOr<Json> GroupService(const std::string& service, const RouteGroup& group,
                            const std::string& name, const ServingSpec& spec) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels selector,
                            GroupLabels(service, GroupName(service, group)));
  int port = spec.RoutePort(service);
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", ObjectMetadata(ObjectLabel(name), selector, {}, spec)},
      {"spec",
       {{"selector", selector.ToJson()},
        {"ports",
         Json::array(
             {{{"name", "http"}, {"port", port}, {"targetPort", port}}})}}}};
}

StatusOr<Json> HttpRoute(const ServiceRoute& route, const std::string& model,
                         const GroupServiceNames& names,
                         const ServingSpec& spec) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ServiceLabels(route.service));
  Json parent = Json::object();
  if (spec.gateway) {
    parent["group"] = "gateway.networking.k8s.io";
    parent["kind"] = "Gateway";
    parent["name"] = spec.gateway->name;
    if (!spec.gateway->namespace_.empty()) {
      parent["namespace"] = spec.gateway->namespace_;
    }
    if (!spec.gateway->section_name.empty()) {
      parent["sectionName"] = spec.gateway->section_name;
    }
  }
  auto header = [&route](const char* name) {
    return Json::array(
        {{{"type", "Exact"}, {"name", name}, {"value", route.service}}});
  };
  Json matches = Json::array();
  if (spec.SpeaksOpenAi(route.service)) {
    // The OpenAI API under /v1, its service named by the body's model
    // (lifted into kModelHeader by body-based routing) or by the header.
    Json v1 = {{"type", "PathPrefix"}, {"value", "/v1"}};
    matches.push_back({{"path", v1}, {"headers", header(kModelHeader)}});
    matches.push_back({{"path", v1}, {"headers", header(kServiceHeader)}});
  } else if (spec.match == RouteMatch::kPath) {
    matches.push_back(
        {{"path", {{"type", "PathPrefix"}, {"value", "/v2/models/" + model}}}});
  } else {
    matches.push_back({{"headers", header(kServiceHeader)}});
  }
  Json rule = {{"matches", std::move(matches)}};
  Json backends = Json::array();
  for (const RouteGroup& g : route.groups) {
    if (g.weight == 0) continue;
    backends.push_back({{"name", names.at(GroupName(route.service, g))},
                        {"port", spec.RoutePort(route.service)},
                        {"weight", g.weight}});
  }
  if (!backends.empty()) rule["backendRefs"] = std::move(backends);
  Json route_spec = Json::object();
  if (spec.gateway) route_spec["parentRefs"] = Json::array({parent});
  if (!spec.hostnames.empty()) route_spec["hostnames"] = spec.hostnames;
  route_spec["rules"] = Json::array({rule});
  return Json{{"apiVersion", kGatewayApi},
              {"kind", "HTTPRoute"},
              {"metadata", ObjectMetadata(ObjectLabel(RouteName(route.service)),
                                          labels, {}, spec)},
              {"spec", route_spec}};
}

Status CheckRoutable(const std::map<std::string, std::string>& models,
                     const ServingSpec& spec) {
  if (!spec.gateway) {
    return Status::InvalidArgument(fmt::format(
        "{}: routing.gateway is not set, so no route can attach anywhere",
        spec.source));
  }
  if (spec.match != RouteMatch::kPath) return Status::Ok();
  std::map<std::string, std::string> by_model;
  for (const auto& [service, model] : models) {
    if (spec.SpeaksOpenAi(service)) continue;  // matched by its name
    auto [it, fresh] = by_model.emplace(model, service);
    if (!fresh) {
      return Status::InvalidArgument(
          fmt::format("{}: services {} and {} both serve model {}, so the path "
                      "/v2/models/{} cannot tell their requests apart; set "
                      "routing.match: header",
                      spec.source, it->second, service, model, model));
    }
  }
  return Status::Ok();
}

Status CheckNotFenced(const nlohmann::json& live, long mine,
                      const std::string& what) {
  MIGSERVE_ASSIGN_OR_RETURN(long written, EpochOf(live));
  if (written <= mine) return Status::Ok();
  return Status::FailedPrecondition(fmt::format(
      "fenced: {}: written by a controller holding the lease at epoch {}; "
      "this one holds epoch {} and writes nothing more",
      what, written, mine));
}

}  // namespace migserve::kubernetes
