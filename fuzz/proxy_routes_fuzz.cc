// Any text as the proxy's routes ConfigMap (the document the router reads
// from the cluster): an error or routes, never a crash; routes read are
// written back.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kubernetes/routing/proxy_routes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
  if (object.is_discarded()) return 0;
  auto routes = migserve::kubernetes::ParseProxyRoutes(object);
  if (routes.ok()) {
    for (const auto& [service, route] : routes->services) {
      (void)migserve::kubernetes::FormatProxyRoute(route);
    }
  }
  return 0;
}
