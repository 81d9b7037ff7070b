// A ProxyConfig as an NGINX configuration (docs/serving.md, "The proxy"):
// per service an upstream of its replicas with `weight=` (smooth weighted
// round robin) in a shared `zone`, so that every worker process of one
// instance turns the same rotation, and a location /v2/models/<model> that
// passes requests to it (HTTP/1.1, connections kept alive). A replica
// without traffic is not listed; a service without replicas answers 503.
// `GET /migserve/generation` answers the generation the configuration
// (503 at generation 0: no routes read yet, so the proxy is not Ready)
// carries, which is how the control plane learns that an instance applied
// it (after a reload, new requests reach only workers with the new one).
#ifndef MIGSERVE_PROXY_NGINX_CONFIG_H_
#define MIGSERVE_PROXY_NGINX_CONFIG_H_

#include <string>

#include "proxy/proxy_config.h"

namespace migserve::proxy {

struct NginxSetup {
  std::string listen = "0.0.0.0:8080";  // address:port or port
  std::string prefix;                   // run files (pid, logs, temp)
  int worker_processes = 0;             // 0: auto
  bool daemon = false;                  // false: stays in the foreground
  // How long an old worker may finish its requests after a reload.
  int drain_timeout_s = 30;
  // Weighted random instead of smooth weighted round robin (a stand-in for
  // the balancers `router: random` assumes; tests compare the two).
  bool random = false;
};

std::string RenderNginxConfig(const ProxyConfig& config,
                              const NginxSetup& setup);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_CONFIG_H_
