#include "kubernetes/routing/proxy_router.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kube/pod_ready.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/routing/proxy_routes.h"
#include "kubernetes/routing/routing_objects.h"

namespace migserve::kubernetes {

ProxyRouter::ProxyRouter(kube::KubeClient* client, RouterOptions options)
    : client_(client), options_(std::move(options)) {}

StatusOr<bool> ProxyRouter::SetRoute(const ServiceRoute& route) {
  MIGSERVE_ASSIGN_OR_RETURN(auto written, Write(route));
  MIGSERVE_RETURN_IF_ERROR(WaitForProxies(written.first));
  return written.second;
}

StatusOr<std::pair<long, bool>> ProxyRouter::Write(const ServiceRoute& route) {
  std::string path = fmt::format("/api/v1/namespaces/{}/configmaps/{}",
                                 options_.namespace_, kProxyRoutesName);
  ProxyRoute desired =
      ProxyRouteOf(route, options_.ModelOf(route.service), options_.serving);
  MIGSERVE_ASSIGN_OR_RETURN(desired.uids, OwnedUids(route));
  std::string key = ProxyRouteKey(route.service);
  std::string value = FormatProxyRoute(desired);
  auto current = client_->Get(path);
  if (current.status().code() == Status::Code::kNotFound) {
    ProxyRoutes first{1, {{route.service, desired}}, options_.epoch};
    MIGSERVE_RETURN_IF_ERROR(
        client_
            ->Create(path.substr(0, path.rfind('/')),
                     ProxyRoutesConfigMap(first, options_.namespace_))
            .status());
    return std::pair{1L, true};
  }
  MIGSERVE_RETURN_IF_ERROR(current.status());
  MIGSERVE_RETURN_IF_ERROR(
      CheckNotFenced(*current, options_.epoch, "the proxy's routes"));
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
         (*current)["metadata"].value("resourceVersion", "")},
        {"annotations", nlohmann::json(kube::Annotations()
                                           .Set(kAnnotationEpoch,
                                                std::to_string(options_.epoch))
                                           .ToJson())}}},
      {"data", {{key, value}, {"generation", std::to_string(generation)}}}};
  MIGSERVE_RETURN_IF_ERROR(client_->Patch(path, patch).status());
  return std::pair{generation, true};
}

StatusOr<std::map<ReplicaSite, std::string>> ProxyRouter::OwnedUids(
    const ServiceRoute& route) {
  std::map<ReplicaSite, std::string> uids;
  if (options_.ledger == nullptr) return uids;
  MIGSERVE_ASSIGN_OR_RETURN(auto ledger, options_.ledger->Entries());
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ServiceLabels(route.service));
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json pods,
      client_->List(
          fmt::format("/api/v1/namespaces/{}/pods", options_.namespace_),
          kube::LabelSelector(labels).Query()));
  std::set<ReplicaSite> members;
  for (const RouteGroup& g : route.groups) {
    members.insert(g.members.begin(), g.members.end());
  }
  for (const nlohmann::json& pod :
       pods.value("items", nlohmann::json::array())) {
    if (!pod.contains("metadata")) continue;
    const nlohmann::json& meta = pod["metadata"];
    auto entry = ledger.find(meta.value("name", ""));
    std::string uid = meta.value("uid", "");
    if (entry == ledger.end() || uid.empty() || entry->second.uid != uid) {
      continue;
    }
    // The controller wrote this pod's labels.
    std::optional<ReplicaSite> site = ReplicaSiteOf(meta);
    if (site && members.count(*site)) uids[*site] = uid;
  }
  return uids;
}

Status ProxyRouter::WaitForProxies(long generation) {
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

}  // namespace migserve::kubernetes
