#include "proxy/nginx_config.h"

#include <fmt/format.h>

namespace migserve::proxy {

std::string RenderNginxConfig(const ProxyConfig& config,
                              const NginxSetup& setup) {
  std::string out = fmt::format(
      "# Written by migserve (generation {}); it rewrites this file at every "
      "change.\n",
      config.generation);
  if (!setup.daemon) out += "daemon off;\n";
  out += fmt::format("worker_processes {};\n",
                     setup.worker_processes > 0
                         ? std::to_string(setup.worker_processes)
                         : std::string("auto"));
  std::string p = setup.prefix.empty() ? "" : setup.prefix + "/";
  out += fmt::format("pid {}nginx.pid;\nerror_log {}error.log warn;\n", p, p);
  out += fmt::format("worker_shutdown_timeout {}s;\n", setup.drain_timeout_s);
  out += "events {\n  worker_connections 8192;\n}\nhttp {\n  access_log off;\n";
  for (const char* temp :
       {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    out += fmt::format("  {}_temp_path {}{}_temp;\n", temp, p, temp);
  }
  for (const ProxyUpstream& u : config.upstreams) {
    if (u.backends.empty()) continue;
    out += fmt::format("  upstream migserve_{} {{\n    zone migserve_{} 64k;\n",
                       u.service, u.service);
    if (setup.random) out += "    random;\n";
    for (const ProxyBackend& b : u.backends) {
      // max_fails=0: a failing replica keeps its weight; the controller,
      // not the proxy, takes replicas out.
      out += fmt::format("    server {}:{} weight={} max_fails=0;\n", b.address,
                         b.port, b.weight);
    }
    out += "    keepalive 64;\n  }\n";
  }
  out += fmt::format("  server {{\n    listen {};\n", setup.listen);
  out += fmt::format(
      "    location = /migserve/generation {{\n"
      "      default_type text/plain;\n"
      "      return {} \"{}\\n\";\n    }}\n",
      config.generation > 0 ? 200 : 503, config.generation);
  for (const ProxyUpstream& u : config.upstreams) {
    out += fmt::format("    location /v2/models/{}/ {{\n", u.model);
    if (u.backends.empty()) {
      out += "      return 503;\n    }\n";
      continue;
    }
    out += fmt::format(
        "      proxy_pass http://migserve_{};\n"
        "      proxy_http_version 1.1;\n"
        "      proxy_set_header Connection \"\";\n    }}\n",
        u.service);
  }
  out += "    location / {\n      return 404;\n    }\n  }\n}\n";
  return out;
}

}  // namespace migserve::proxy
