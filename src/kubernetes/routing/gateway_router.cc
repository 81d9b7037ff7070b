#include "kubernetes/routing/gateway_router.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <vector>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/routing_objects.h"

namespace migserve::kubernetes {

GatewayRouter::GatewayRouter(kube::KubeClient* client, RouterOptions options)
    : client_(client), options_(std::move(options)) {
  options_.serving.namespace_ = options_.namespace_;
}

std::string GatewayRouter::ServicesPath() const {
  return fmt::format("/api/v1/namespaces/{}/services", options_.namespace_);
}

StatusOr<std::string> GatewayRouter::SelectedGroup(const std::string& name) {
  auto known = selects_.find(name);
  if (known != selects_.end()) return known->second;
  auto live = client_->Get(ServicesPath() + "/" + name);
  if (live.status().code() == Status::Code::kNotFound) return std::string();
  MIGSERVE_RETURN_IF_ERROR(live.status());
  const nlohmann::json* spec = ObjectAt(*live, "spec");
  std::string group =
      spec != nullptr
          ? StringField(*spec, "selector", kLabelGroup).value_or(std::string())
          : std::string();
  selects_[name] = group;
  return group;
}

StatusOr<GroupServiceNames> GatewayRouter::NamesFor(
    const ServiceRoute& route, const std::set<std::string>& referenced) {
  GroupServiceNames names;
  std::map<std::string, std::vector<const RouteGroup*>> slots;
  for (const RouteGroup& g : route.groups) {
    if (g.weight <= 0) continue;
    names[GroupName(route.service, g)] = GroupName(route.service, g);
    slots[SlotName(route.service, g)].push_back(&g);
  }
  for (const auto& [slot, groups] : slots) {
    const RouteGroup* holder = nullptr;
    if (referenced.count(slot) > 0) {
      // The gateway may still send the slot's share to the group it
      // selects: only that group keeps it; if that group is gone, the slot
      // waits out this change unnamed, and is pointed at a group at the
      // next.
      MIGSERVE_ASSIGN_OR_RETURN(std::string selected, SelectedGroup(slot));
      for (const RouteGroup* g : groups) {
        if (GroupName(route.service, *g) == selected) holder = g;
      }
    } else {
      for (const RouteGroup* g : groups) {
        if (holder == nullptr || g->weight > holder->weight) holder = g;
      }
    }
    if (holder != nullptr) names[GroupName(route.service, *holder)] = slot;
  }
  return names;
}

Status GatewayRouter::EnsureService(const std::string& service,
                                    const RouteGroup& group,
                                    const std::string& name) {
  std::string label = GroupName(service, group);
  auto known = selects_.find(name);
  if (known != selects_.end() && known->second == label) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(
      Json service_object,
      GroupService(service, group, name, options_.serving));
  nlohmann::json object(service_object);
  auto made = client_->Create(ServicesPath(), object);
  if (made.ok()) {
    selects_[name] = label;
    return Status::Ok();
  }
  if (made.status().code() != Status::Code::kAborted) return made.status();
  // It exists (AlreadyExists): a slot's Service now given to another
  // group selects that group's pods from here on.
  selects_.erase(name);
  MIGSERVE_ASSIGN_OR_RETURN(std::string selected, SelectedGroup(name));
  if (selected != label) {
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Patch(ServicesPath() + "/" + name,
                    {{"metadata", {{"labels", object["metadata"]["labels"]}}},
                     {"spec", {{"selector", object["spec"]["selector"]}}}})
            .status());
  }
  selects_[name] = label;
  return Status::Ok();
}

namespace {

// `key` as a JSON pointer's last token (RFC 6901: '~' and '/' escaped).
std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    out += c == '~' ? std::string("~0") : c == '/' ? "~1" : std::string(1, c);
  }
  return out;
}

// A JSON patch that writes `desired`'s spec and `notes` over `current`, but
// only if the route is still as `current` says: its fencing epoch and the
// route it records, tested at the API server in the same request (issue
// 91: a merge patch held on the wire past the Lease landed after the
// successor's and routed a service at 0). A route that records neither is
// tested by its resourceVersion.
nlohmann::json ConditionalRouteWrite(const nlohmann::json& current,
                                     const nlohmann::json& desired,
                                     const kube::Annotations& notes) {
  nlohmann::json ops = nlohmann::json::array();
  const std::string epoch = Annotation(current, kAnnotationEpoch);
  const std::string record = Annotation(current, kAnnotationRoute);
  auto at = [](const char* key) {
    return "/metadata/annotations/" + PointerToken(key);
  };
  if (!epoch.empty() && !record.empty()) {
    ops.push_back(
        {{"op", "test"}, {"path", at(kAnnotationEpoch)}, {"value", epoch}});
    ops.push_back(
        {{"op", "test"}, {"path", at(kAnnotationRoute)}, {"value", record}});
  } else {
    ops.push_back(
        {{"op", "test"},
         {"path", "/metadata/resourceVersion"},
         {"value", current["metadata"].value("resourceVersion", "")}});
  }
  const nlohmann::json written = notes.ToJson();
  const auto meta = current.find("metadata");
  if (meta != current.end() && meta->contains("annotations") &&
      (*meta)["annotations"].is_object()) {
    for (const auto& [key, value] : written.items()) {
      ops.push_back(
          {{"op", "add"}, {"path", at(key.c_str())}, {"value", value}});
    }
  } else {
    ops.push_back(
        {{"op", "add"}, {"path", "/metadata/annotations"}, {"value", written}});
  }
  ops.push_back({{"op", "add"}, {"path", "/spec"}, {"value", desired["spec"]}});
  return ops;
}

}  // namespace

StatusOr<bool> GatewayRouter::SetRoute(const ServiceRoute& route) {
  StatusOr<bool> written = WriteRoute(route);
  // The route changed between the read and the write: read it again, once
  // (a newer controller's write is then refused as fenced, by the read).
  if (written.status().code() == Status::Code::kAborted) {
    written = WriteRoute(route);
  }
  return written;
}

StatusOr<bool> GatewayRouter::WriteRoute(const ServiceRoute& route) {
  std::string path =
      fmt::format("/apis/{}/namespaces/{}/httproutes/{}", kGatewayApi,
                  options_.namespace_, RouteName(route.service));
  auto current = client_->Get(path);
  bool exists = current.status().code() != Status::Code::kNotFound;
  if (exists) {
    MIGSERVE_RETURN_IF_ERROR(current.status());
    MIGSERVE_RETURN_IF_ERROR(CheckNotFenced(
        *current, options_.epoch, "the HTTPRoute of " + route.service));
  }
  std::set<std::string> referenced =
      exists ? BackendNames(*current) : std::set<std::string>();
  MIGSERVE_ASSIGN_OR_RETURN(GroupServiceNames names,
                            NamesFor(route, referenced));
  for (const RouteGroup& g : route.groups) {
    if (g.weight <= 0) continue;
    MIGSERVE_RETURN_IF_ERROR(
        EnsureService(route.service, g, names.at(GroupName(route.service, g))));
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      Json desired, HttpRoute(route, options_.ModelOf(route.service), names,
                              options_.serving));
  std::string record = desired["spec"].dump();
  kube::Annotations notes;
  notes.Set(kAnnotationRoute, record)
      .Set(kAnnotationEpoch, std::to_string(options_.epoch));
  desired["metadata"]["annotations"] = notes.ToJson();
  if (!exists) {
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Create(path.substr(0, path.rfind('/')), nlohmann::json(desired))
            .status());
    return true;
  }
  if (Annotation(*current, kAnnotationRoute) == record) return false;
  // Tests, not the resourceVersion: the gateway writes the route's status
  // too, which a write of the spec must not conflict with.
  MIGSERVE_RETURN_IF_ERROR(
      client_
          ->JsonPatch(path, ConditionalRouteWrite(
                                *current, nlohmann::json(desired), notes))
          .status());
  // Kept: the Services this route and the one it replaces name, and the
  // slots' Services of its groups (a slot's name outlives its credits).
  std::set<std::string> kept = BackendNames(desired);
  kept.merge(referenced);
  for (const RouteGroup& g : route.groups) {
    kept.insert(SlotName(route.service, g));
  }
  MIGSERVE_RETURN_IF_ERROR(DeleteGroupServicesBut(route.service, kept));
  return true;
}

std::set<std::string> GatewayRouter::BackendNames(
    const nlohmann::json& http_route) {
  std::set<std::string> names;
  const nlohmann::json* spec = ObjectAt(http_route, "spec");
  if (spec == nullptr || !spec->contains("rules") ||
      !(*spec)["rules"].is_array()) {
    return names;
  }
  for (const nlohmann::json& rule : (*spec)["rules"]) {
    if (!rule.is_object() || !rule.contains("backendRefs") ||
        !rule["backendRefs"].is_array()) {
      continue;
    }
    for (const nlohmann::json& ref : rule["backendRefs"]) {
      if (std::optional<std::string> name = StringAt(ref, "name")) {
        names.insert(*name);
      }
    }
  }
  return names;
}

Status GatewayRouter::DeleteGroupServicesBut(
    const std::string& service, const std::set<std::string>& kept) {
  std::string path = ServicesPath();
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ServiceLabels(service));
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json list,
      client_->List(path, kube::LabelSelector(labels).Query()));
  for (const nlohmann::json& object :
       list.value("items", nlohmann::json::array())) {
    const nlohmann::json* metadata = ObjectAt(object, "metadata");
    std::optional<std::string> name =
        metadata != nullptr ? StringAt(*metadata, "name") : std::nullopt;
    if (!name || kept.count(*name) > 0) continue;
    Status deleted = client_->Delete(path + "/" + *name);
    if (!deleted.ok() && deleted.code() != Status::Code::kNotFound) {
      return deleted;
    }
    selects_.erase(*name);
  }
  return Status::Ok();
}

}  // namespace migserve::kubernetes
