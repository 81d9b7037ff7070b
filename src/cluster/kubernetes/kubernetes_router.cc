#include "cluster/kubernetes/kubernetes_router.h"

#include <fmt/format.h>

#include "cluster/kubernetes/mig_annotations.h"
#include "cluster/kubernetes/names.h"
#include "cluster/kubernetes/routing_objects.h"

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

StatusOr<bool> KubernetesRouter::SetRoute(const ServiceRoute& route) {
  for (const RouteGroup& g : route.groups) {
    if (g.weight > 0) MIGSERVE_RETURN_IF_ERROR(EnsureService(route.service, g));
  }
  auto model = options_.models.find(route.service);
  Json desired = HttpRoute(
      route, model != options_.models.end() ? model->second : route.service,
      options_.serving);
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
  return true;
}

}  // namespace migserve::cluster::kubernetes
