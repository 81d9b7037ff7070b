// Any JSON as the replica pods the proxy's control plane watches ("pods",
// by name) and its routes ConfigMap ("routes"): whatever a pod's status or
// ports say, nothing but an IP address literal and a TCP port reaches a
// server line of the nginx configuration (a compromised kubelet writing a
// pod's status must not reprogram the proxy).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kubernetes/routing/proxy_routes.h"
#include "proxy/control_plane.h"
#include "proxy/nginx_config.h"
#include "proxy/proxy_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json input = nlohmann::json::parse(text, nullptr, false);
  if (!input.is_object()) return 0;
  migserve::kube::Informer::Objects pods;
  if (auto it = input.find("pods"); it != input.end() && it->is_object()) {
    for (const auto& [name, pod] : it->items()) pods[name] = pod;
  }
  migserve::kubernetes::ProxyRoutes routes;
  if (auto it = input.find("routes"); it != input.end()) {
    auto parsed = migserve::kubernetes::ParseProxyRoutes(*it);
    if (parsed.ok()) routes = *parsed;
  }
  migserve::proxy::ReplicaBackends backends = migserve::proxy::BackendsOf(pods);
  migserve::proxy::ProxyConfig config =
      migserve::proxy::ConfigOf(routes, backends);
  for (const auto& upstream : config.upstreams) {
    for (const auto& b : upstream.backends) {
      if (!migserve::IsIpAddress(b.http.host()) &&
          !migserve::IsPlainHost(b.http.host())) {
        __builtin_trap();  // a server line nginx would read otherwise
      }
      if (!migserve::IsPort(b.http.port())) __builtin_trap();
    }
  }
  (void)migserve::proxy::RenderNginxConfig(config, {});
  return 0;
}
