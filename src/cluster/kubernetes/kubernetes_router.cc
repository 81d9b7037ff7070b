#include "cluster/kubernetes/kubernetes_router.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include "cluster/kubernetes/mig_annotations.h"
#include "cluster/kubernetes/names.h"
#include "cluster/kubernetes/proxy_routes.h"
#include "cluster/kubernetes/routing_objects.h"
#include "kube/pod_ready.h"
#include "util/json_fields.h"

namespace migserve::cluster::kubernetes {

KubernetesRouter::KubernetesRouter(kube::KubeClient* client,
                                   RouterOptions options)
    : client_(client), options_(std::move(options)) {
  options_.serving.namespace_ = options_.namespace_;
}

Status KubernetesRouter::EnsureService(const std::string& service,
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

const std::string& KubernetesRouter::ModelOf(const std::string& service) const {
  auto model = options_.models.find(service);
  return model != options_.models.end() ? model->second : service;
}

StatusOr<bool> KubernetesRouter::SetRoute(const ServiceRoute& route) {
  bool changed = false;
  if (options_.serving.gateway) {
    MIGSERVE_ASSIGN_OR_RETURN(changed, SetHttpRoute(route));
  }
  if (options_.proxy) {
    MIGSERVE_ASSIGN_OR_RETURN(auto written, SetProxyRoute(route));
    MIGSERVE_RETURN_IF_ERROR(WaitForProxies(written.first));
    changed = changed || written.second;
  }
  return changed;
}

StatusOr<std::pair<long, bool>> KubernetesRouter::SetProxyRoute(
    const ServiceRoute& route) {
  std::string path = fmt::format("/api/v1/namespaces/{}/configmaps/{}",
                                 options_.namespace_, kProxyRoutesName);
  ProxyRoute desired{route, ModelOf(route.service)};
  std::string key = ProxyRouteKey(route.service);
  std::string value = FormatProxyRoute(desired);
  auto current = client_->Get(path);
  if (current.status().code() == Status::Code::kNotFound) {
    ProxyRoutes first{1, {{route.service, desired}}};
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Create(path.substr(0, path.rfind('/')),
                     ProxyRoutesConfigMap(first, options_.namespace_))
            .status());
    return std::pair{1L, true};
  }
  MIGSERVE_RETURN_IF_ERROR(current.status());
  // Only the generation is read: the other services' routes are theirs.
  MIGSERVE_ASSIGN_OR_RETURN(long live, ParseProxyGeneration(*current));
  const nlohmann::json& data = (*current)["data"];
  if (data.contains(key) && data[key] == value) return std::pair{live, false};
  long generation = live + 1;
  // The resourceVersion makes a concurrent writer's change a conflict, not
  // a lost update.
  nlohmann::json patch = {
      {"metadata",
       {{"resourceVersion",
         (*current)["metadata"].value("resourceVersion", "")}}},
      {"data", {{key, value}, {"generation", std::to_string(generation)}}}};
  MIGSERVE_RETURN_IF_ERROR(client_->Patch(path, patch).status());
  return std::pair{generation, true};
}

Status KubernetesRouter::WaitForProxies(long generation) {
  std::string path =
      fmt::format("/api/v1/namespaces/{}/pods", options_.namespace_);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(options_.proxy_timeout_s);
  while (true) {
    MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json pods,
                              client_->List(path, ProxyPodQuery()));
    std::vector<std::string> behind;
    for (const nlohmann::json& pod :
         pods.value("items", nlohmann::json::array())) {
      if (!kube::PodReady(pod)) continue;
      std::string seen = Annotation(pod, kAnnotationProxyGeneration);
      if (std::strtol(seen.c_str(), nullptr, 10) >= generation) continue;
      behind.push_back(fmt::format("{} (at {})",
                                   pod["metadata"].value("name", "?"),
                                   seen.empty() ? std::string("none") : seen));
    }
    if (behind.empty()) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::DeadlineExceeded(fmt::format(
          "proxy pods {} have not applied route generation {} within {} s",
          fmt::join(behind, ", "), generation, options_.proxy_timeout_s));
    }
    std::this_thread::sleep_for(
        std::chrono::duration<double>(options_.proxy_poll_s));
  }
}

StatusOr<bool> KubernetesRouter::SetHttpRoute(const ServiceRoute& route) {
  for (const RouteGroup& g : route.groups) {
    if (g.weight > 0) MIGSERVE_RETURN_IF_ERROR(EnsureService(route.service, g));
  }
  Json desired = HttpRoute(route, ModelOf(route.service), options_.serving);
  std::string record = desired["spec"].dump();
  desired["metadata"]["annotations"] = {{kAnnotationRoute, record}};
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
  if (Annotation(*current, kAnnotationRoute) == record) return false;
  nlohmann::json patch = {
      {"metadata", {{"annotations", {{kAnnotationRoute, record}}}}},
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

std::set<std::string> KubernetesRouter::BackendNames(
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

Status KubernetesRouter::DeleteGroupServicesBut(
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

}  // namespace migserve::cluster::kubernetes
