#include "kubernetes/routing/gateway_router.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/routing/routing_objects.h"
#include "util/json_fields.h"

namespace migserve::kubernetes {

GatewayRouter::GatewayRouter(kube::KubeClient* client, RouterOptions options)
    : client_(client), options_(std::move(options)) {
  options_.serving.namespace_ = options_.namespace_;
}

Status GatewayRouter::EnsureService(const std::string& service,
                                    const RouteGroup& group) {
  std::string name = GroupName(service, group);
  if (services_.count(name) > 0) return Status::Ok();
  auto made = client_->Create(
      fmt::format("/api/v1/namespaces/{}/services", options_.namespace_),
      nlohmann::json(GroupService(service, group, options_.serving)));
  // AlreadyExists: the same name always selects the same group.
  if (!made.ok() && made.status().code() != Status::Code::kAborted) {
    return made.status();
  }
  services_.insert(name);
  return Status::Ok();
}

StatusOr<bool> GatewayRouter::SetRoute(const ServiceRoute& route) {
  for (const RouteGroup& g : route.groups) {
    if (g.weight > 0) MIGSERVE_RETURN_IF_ERROR(EnsureService(route.service, g));
  }
  Json desired =
      HttpRoute(route, options_.ModelOf(route.service), options_.serving);
  std::string record = desired["spec"].dump();
  desired["metadata"]["annotations"] = {
      {kAnnotationRoute, record},
      {kAnnotationEpoch, std::to_string(options_.epoch)}};
  std::string path =
      fmt::format("/apis/{}/namespaces/{}/httproutes/{}", kGatewayApi,
                  options_.namespace_, RouteName(route.service));
  auto current = client_->Get(path);
  if (current.status().code() == Status::Code::kNotFound) {
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Create(path.substr(0, path.rfind('/')), nlohmann::json(desired))
            .status());
    return true;
  }
  MIGSERVE_RETURN_IF_ERROR(current.status());
  MIGSERVE_RETURN_IF_ERROR(CheckNotFenced(*current, options_.epoch,
                                          "the HTTPRoute of " + route.service));
  if (Annotation(*current, kAnnotationRoute) == record) return false;
  // No resourceVersion: the gateway writes the route's status too.
  nlohmann::json patch = {
      {"metadata",
       {{"annotations",
         {{kAnnotationRoute, record},
          {kAnnotationEpoch, std::to_string(options_.epoch)}}}}},
      {"spec", nlohmann::json(desired["spec"])}};
  // A merge patch keeps what it does not name: drop what is gone.
  if (!desired["spec"].contains("hostnames")) {
    patch["spec"]["hostnames"] = nullptr;
  }
  MIGSERVE_RETURN_IF_ERROR(client_->Patch(path, patch).status());
  std::set<std::string> kept = BackendNames(desired);
  kept.merge(BackendNames(*current));
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
  std::string path =
      fmt::format("/api/v1/namespaces/{}/services", options_.namespace_);
  std::string selector =
      fmt::format("{}={},{}={}", kManagedBy, kManager, kLabelService, service);
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json list,
      client_->List(path,
                    "labelSelector=" + kube::KubeClient::Escape(selector)));
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
    services_.erase(*name);
  }
  return Status::Ok();
}

}  // namespace migserve::kubernetes
