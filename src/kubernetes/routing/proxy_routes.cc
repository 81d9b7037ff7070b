#include "kubernetes/routing/proxy_routes.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/routing/routing_objects.h"

namespace migserve::kubernetes {
namespace {

using json = nlohmann::json;

constexpr char kRoutePrefix[] = "route.";
constexpr char kSource[] = "configmap migserve-proxy-routes";

struct Member {
  ReplicaSite site;
  std::string uid;
  std::string owner;
};

Status ReadMember(const JsonFields& f, Member* m) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("node", true, &m->site.gpu.node));
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpu", true, &m->site.gpu.index));
  MIGSERVE_RETURN_IF_ERROR(f.Get("start", true, &m->site.start));
  MIGSERVE_RETURN_IF_ERROR(f.Get("uid", false, &m->uid));
  MIGSERVE_RETURN_IF_ERROR(f.Get("owner", false, &m->owner));
  if (!m->owner.empty()) {
    if (std::string problem = ObjectNameProblem(m->owner); !problem.empty()) {
      return f.Error("owner", problem);
    }
  }
  return Status::Ok();
}

// Reads a group; its members' uids and owners go to `route`.
Status ReadGroup(const JsonFields& f, RouteGroup* g, ProxyRoute* route) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("gpu", true, &g->gpu_model));
  MIGSERVE_RETURN_IF_ERROR(f.Get("profile", true, &g->profile));
  MIGSERVE_RETURN_IF_ERROR(f.Get("batch", true, &g->batch));
  MIGSERVE_RETURN_IF_ERROR(f.Get("procs", true, &g->procs));
  MIGSERVE_RETURN_IF_ERROR(f.Get("throughput", true, &g->credit));
  MIGSERVE_RETURN_IF_ERROR(f.Get("weight", true, &g->weight));
  if (!(g->credit >= 0) || g->weight < 0) {
    return f.Error("weight", "throughput and weight must be >= 0");
  }
  std::vector<Member> members;
  MIGSERVE_RETURN_IF_ERROR(f.Objects("members", ReadMember, &members));
  for (const Member& m : members) {
    g->members.push_back(m.site);
    if (!m.uid.empty()) route->uids[m.site] = m.uid;
    if (!m.owner.empty()) route->owners[m.site] = m.owner;
  }
  g->replicas = static_cast<int>(g->members.size());
  return Status::Ok();
}

}  // namespace

ProxyRoute ProxyRouteOf(ServiceRoute route, const std::string& model,
                        const ServingSpec& spec) {
  const std::string service = route.service;
  std::vector<ServedName> aliases;
  for (const std::string& served : spec.ServedNames(service, model)) {
    StatusOr<ServedName> alias = ServedName::Parse(served);
    if (served != service && served != model && alias.ok()) {
      aliases.push_back(*alias);
    }
  }
  return {std::move(route),
          model,
          {},
          {},
          spec.SpeaksOpenAi(service),
          std::move(aliases),
          spec.KeepsConversations(service)};
}

ProxyRoutes ProxyRoutesOf(const ClusterState& state,
                          const std::map<std::string, std::string>& models,
                          const ServingSpec& spec) {
  ProxyRoutes routes{1, {}};
  for (auto& [service, route] : Routes(state)) {
    auto model = models.find(service);
    std::string name = model != models.end() ? model->second : service;
    routes.services[service] = ProxyRouteOf(std::move(route), name, spec);
  }
  return routes;
}

std::string ProxyRouteKey(const std::string& service) {
  return kRoutePrefix + service;
}

std::string FormatProxyRoute(const ProxyRoute& route) {
  json groups = json::array();
  for (const RouteGroup& g : route.route.groups) {
    json members = json::array();
    for (const ReplicaSite& m : g.members) {
      json member = {
          {"node", m.gpu.node}, {"gpu", m.gpu.index}, {"start", m.start}};
      if (auto uid = route.uids.find(m); uid != route.uids.end()) {
        member["uid"] = uid->second;
      }
      if (auto owner = route.owners.find(m); owner != route.owners.end()) {
        member["owner"] = owner->second;
      }
      members.push_back(member);
    }
    groups.push_back({{"gpu", g.gpu_model},
                      {"profile", g.profile},
                      {"batch", g.batch},
                      {"procs", g.procs},
                      {"throughput", g.credit},
                      {"weight", g.weight},
                      {"members", members}});
  }
  json out = {{"service", route.route.service},
              {"model", route.model},
              {"groups", groups}};
  if (route.openai) out["api"] = "openai";
  if (!route.aliases.empty()) {
    json aliases = json::array();
    for (const ServedName& alias : route.aliases)
      aliases.push_back(alias.str());
    out["aliases"] = aliases;
  }
  if (route.affinity) out["affinity"] = true;
  return out.dump();
}

json ProxyRoutesConfigMap(const ProxyRoutes& routes,
                          const std::string& namespace_) {
  json data = {{"generation", std::to_string(routes.generation)}};
  for (const auto& [service, route] : routes.services) {
    data[ProxyRouteKey(service)] = FormatProxyRoute(route);
  }
  json meta = {{"name", kProxyRoutesName}, {"labels", ProxyLabels().ToJson()}};
  if (routes.epoch > 0) {
    kube::Annotations notes;
    notes.Set(kAnnotationEpoch, std::to_string(routes.epoch));
    meta["annotations"] = notes.ToJson();
  }
  if (!namespace_.empty()) meta["namespace"] = namespace_;
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", meta},
          {"data", data}};
}

StatusOr<long> ParseProxyGeneration(const json& object) {
  std::optional<std::string> text = StringField(object, "data", "generation");
  if (!text) return 0;
  char* end = nullptr;
  errno = 0;
  long generation = std::strtol(text->c_str(), &end, 10);
  // Past 2^63 - 1, strtol gives its largest: a generation clamped in
  // silence (issue 92) would never grow again.
  if (text->empty() || *end != '\0' || generation < 0 || errno == ERANGE ||
      !std::isdigit(static_cast<unsigned char>(text->front()))) {
    return Status::InvalidArgument(fmt::format(
        "{}: data.generation: {} is not a generation (a whole number from 0 "
        "to {})",
        kSource, json(*text).dump(), std::numeric_limits<long>::max()));
  }
  return generation;
}

StatusOr<ProxyRoutes> ParseProxyRoutes(const json& object) {
  const std::string source = kSource;
  ProxyRoutes routes;
  const json* data = object.contains("data") && object["data"].is_object()
                         ? &object["data"]
                         : nullptr;
  MIGSERVE_ASSIGN_OR_RETURN(routes.generation, ParseProxyGeneration(object));
  MIGSERVE_ASSIGN_OR_RETURN(routes.epoch, EpochOf(object));
  if (data == nullptr) return routes;
  for (const auto& [key, value] : data->items()) {
    if (!value.is_string()) {
      return Status::InvalidArgument(
          fmt::format("{}: data.{}: expected a string", source, key));
    }
    if (key.rfind(kRoutePrefix, 0) != 0) continue;
    const std::string& text = value.get_ref<const std::string&>();
    std::string where = source + " data." + key;
    MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, where));
    JsonFields f(root, where, "");
    ProxyRoute route;
    MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &route.route.service));
    MIGSERVE_RETURN_IF_ERROR(f.Get("model", true, &route.model));
    MIGSERVE_RETURN_IF_ERROR(f.CheckPlainName("service", route.route.service));
    MIGSERVE_RETURN_IF_ERROR(f.CheckPlainName("model", route.model));
    std::string api = "kserve";
    MIGSERVE_RETURN_IF_ERROR(f.Get("api", false, &api));
    if (api != "kserve" && api != "openai") {
      return f.Error("api",
                     "must be kserve (the default) or openai, got " + api);
    }
    route.openai = api == "openai";
    MIGSERVE_RETURN_IF_ERROR(f.CheckedList("aliases", &route.aliases));
    MIGSERVE_RETURN_IF_ERROR(f.Get("affinity", false, &route.affinity));
    MIGSERVE_RETURN_IF_ERROR(f.Objects(
        "groups",
        [&](const JsonFields& g, RouteGroup* group) {
          return ReadGroup(g, group, &route);
        },
        &route.route.groups));
    if (ProxyRouteKey(route.route.service) != key) {
      return f.Error("service", "does not match the key " + key);
    }
    routes.services[route.route.service] = std::move(route);
  }
  return routes;
}

kube::Labels ProxyLabels() {
  kube::Labels labels = ManagedLabels();
  labels.Set(kLabelComponent, kube::LabelValue::Parse(kProxyComponent).value());
  return labels;
}

std::string ProxyPodQuery() {
  return kube::LabelSelector(ProxyLabels()).Query();
}

}  // namespace migserve::kubernetes
