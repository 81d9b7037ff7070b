#include "proxy/nginx_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "proxy/embedded_openai_script.h"
#include "proxy/nginx_openai.h"
#include "proxy/nginx_parts.h"

namespace migserve::proxy {
namespace {

// The weights of `u`'s servers on a consistent-hash ring: nginx puts 160
// points on the ring per unit of a server's weight, in every worker, so the
// route's weights (up to cluster::kMaxRouteWeight each) are scaled to
// kRingWeight in all, each at least 1: a ring of at most some 200,000
// points (3 MB), a server's share within half a unit of its weight's.
std::vector<long> RingWeights(const ProxyUpstream& u) {
  constexpr double kRingWeight = 1000;
  double total = 0;
  for (const ProxyBackend& b : u.backends) total += b.weight;
  std::vector<long> out;
  for (const ProxyBackend& b : u.backends) {
    out.push_back(std::max(
        1L, std::lround(static_cast<double>(b.weight) * kRingWeight / total)));
  }
  return out;
}

// One upstream of `u`'s servers named `name`: `balance` its balancing
// line ("" for nginx's weighted round robin), `ring` the ring's weights
// and bounds where it is one.
std::string Upstream(const ProxyUpstream& u, const std::string& name, bool grpc,
                     const std::string& balance, bool ring) {
  // The zone holds each server's state (some 300 bytes in nginx 1.22);
  // 64k holds a few dozen, and a service may have hundreds.
  std::string out = fmt::format("  upstream {} {{\n    zone {} {}k;\n", name,
                                name, 64 + u.backends.size());
  out += balance;
  const std::vector<long> ring_weights =
      ring ? RingWeights(u) : std::vector<long>();
  for (size_t i = 0; i < u.backends.size(); ++i) {
    const ProxyBackend& b = u.backends[i];
    // A server line is written only from a checked Endpoint (an IPv6
    // address in brackets): nothing else from a pod reaches it.
    const std::optional<Endpoint>& at =
        grpc ? b.grpc : std::optional<Endpoint>(b.http);
    if (!at) continue;
    // max_fails=0: a failing replica keeps its weight; the controller,
    // not the proxy, takes replicas out.
    out += fmt::format("    server {} weight={}{} max_fails=0;\n",
                       at->HostPort(), ring ? ring_weights[i] : b.weight,
                       ring && b.max_conns > 0
                           ? fmt::format(" max_conns={}", b.max_conns)
                           : std::string());
  }
  return out + "    keepalive 64;\n  }\n";
}

std::string Upstreams(const ProxyConfig& config, const NginxSetup& setup,
                      bool grpc) {
  std::string out;
  // Where an affine service's requests spill when every replica is full
  // (OpenAiLocations), every OpenAI service has an upstream: another's go
  // a second round after every replica failed.
  const bool spill = !grpc && AnyAffine(config, setup);
  for (const ProxyUpstream& u : config.upstreams) {
    if (RouteOf(u, grpc) == kEmpty) continue;
    std::string name =
        (grpc ? "migserve_grpc_" : "migserve_") + u.service.str();
    if (setup.random) {
      out += Upstream(u, name, grpc, "    random;\n", false);
    } else if (!grpc && Affine(u, setup)) {
      // A conversation's turns reach the replica that holds its prefix:
      // a consistent-hash ring weighted by the credits, where a replica
      // with its batch in flight passes the next turn along the ring;
      // with every replica full, the spill upstream below takes it.
      out += Upstream(u, name, grpc,
                      "    hash $migserve_openai_session consistent;\n", true);
    } else if (u.openai) {
      // A generation lasts from a tenth of a second to minutes: the
      // replica with the fewest requests in flight per weight (its credit)
      // takes the next, not the next in a rotation.
      out += Upstream(u, name, grpc, "    least_conn;\n", false);
    } else {
      out += Upstream(u, name, grpc, "", false);
    }
    if (u.openai && spill) {
      out += Upstream(u, "migserve_spill_" + u.service.str(), grpc,
                      "    least_conn;\n", false);
    }
  }
  return out;
}

// The maps that pick a request's service: the header when a request has
// it, else (HTTP) the one service of the model in the path, or (gRPC,
// whose path names the method, not the model) the one service there is.
std::string ServiceMaps(const ProxyConfig& config) {
  std::map<std::string, std::vector<const ProxyUpstream*>> by_model;
  for (const ProxyUpstream& u : config.upstreams) {
    by_model[u.model.str()].push_back(&u);
  }
  std::string out = "  map $uri $migserve_by_model {\n    default \"\";\n";
  for (const auto& [model, services] : by_model) {
    out += fmt::format("    \"~^/v2/models/{}(/|$)\" \"{}\";\n", Literal(model),
                       services.size() > 1 ? std::string(kAmbiguous)
                                           : RouteOf(*services[0], false));
  }
  out += "  }\n";
  std::string only_grpc = config.upstreams.empty() ? kUnknown
                          : config.upstreams.size() == 1
                              ? RouteOf(config.upstreams[0], true)
                              : std::string(kAmbiguous);
  for (bool grpc : {false, true}) {
    out += fmt::format(
        "  map $http_migserve_service $migserve_{}service {{\n"
        "    \"\" \"{}\";\n    default \"{}\";\n",
        grpc ? "grpc_" : "", grpc ? only_grpc : "$migserve_by_model", kUnknown);
    for (const ProxyUpstream& u : config.upstreams) {
      out += fmt::format("    \"{}\" \"{}\";\n", u.service.str(),
                         RouteOf(u, grpc));
    }
    out += "  }\n";
  }
  return out;
}

std::string HttpServer(const ProxyConfig& config, const NginxSetup& setup,
                       const OpenAiNames& names) {
  std::string out =
      fmt::format("  server {{\n    listen {};\n", setup.listen.HostPort());
  bool ready = config.generation > 0;
  std::string instance =
      setup.instance.str().empty()
          ? ""
          : fmt::format("      add_header X-Migserve-Instance {} always;\n",
                        setup.instance.str());
  out += fmt::format(
      "    default_type text/plain;\n"
      "    location = /migserve/generation {{\n{}"
      "      return {} \"{}\\n\";\n    }}\n"
      "    location = /v2/health/live {{\n      return 200;\n    }}\n"
      "    location = /v2/health/ready {{\n      return {};\n    }}\n",
      instance, ready ? 200 : 503, config.generation, ready ? 200 : 503);
  out += fmt::format(
      "    location /v2/models/ {{\n"
      "      if ($migserve_service = \"\") {{\n"
      "        return 404 \"no service serves this model\\n\";\n      }}\n"
      "      if ($migserve_service = \"{}\") {{\n"
      "        return 404 \"no such service (header migserve-service)\\n\";\n"
      "      }}\n"
      "      if ($migserve_service = \"{}\") {{\n"
      "        return 400 \"several services serve this model: name one in "
      "the header migserve-service\\n\";\n      }}\n"
      "      if ($migserve_service = \"{}\") {{\n"
      "        return 503 \"the service has no replica\\n\";\n      }}\n"
      "      proxy_pass http://migserve_$migserve_service;\n"
      "      proxy_http_version 1.1;\n"
      "      proxy_set_header Connection \"\";\n    }}\n",
      kUnknown, kAmbiguous, kEmpty);
  if (NeedsOpenAiScript(config)) out += OpenAiLocations(config, setup, names);
  out += "    location / {\n      return 404;\n    }\n  }\n";
  return out;
}

// gRPC over HTTP/2 without TLS; an unroutable call ends with a gRPC status
// (a trailers-only response) instead of an HTTP error.
std::string GrpcServer(const NginxSetup& setup) {
  std::string out = fmt::format("  server {{\n    listen {} http2;\n",
                                setup.grpc_listen->HostPort());
  out += "    default_type application/grpc;\n    location / {\n";
  struct Refusal {
    const char* token;
    int code;
    const char* message;
  } refusals[] = {
      {kUnknown, 5, "no such service (header migserve-service)"},
      {kAmbiguous, 3, "name the service in the header migserve-service"},
      {kEmpty, 14, "the service has no replica"},
  };
  for (const Refusal& r : refusals) {
    out += fmt::format(
        "      if ($migserve_grpc_service = \"{}\") {{\n"
        "        add_header grpc-status {} always;\n"
        "        add_header grpc-message \"{}\" always;\n"
        "        return 200;\n      }}\n",
        r.token, r.code, r.message);
  }
  out +=
      "      grpc_pass grpc://migserve_grpc_$migserve_grpc_service;\n"
      "    }\n  }\n";
  return out;
}

}  // namespace

std::string RenderNginxConfig(const ProxyConfig& config,
                              const NginxSetup& setup) {
  std::string out = fmt::format(
      "# Written by migserve (generation {}); it rewrites this file at every "
      "change.\n",
      config.generation);
  const bool openai = NeedsOpenAiScript(config);
  // The names each OpenAI service answers to: its maps and /v1/models.
  const OpenAiNames names = NamesOf(config);
  if (openai) out += fmt::format("load_module {};\n", setup.js_module.str());
  if (!setup.daemon) out += "daemon off;\n";
  out += fmt::format("worker_processes {};\n",
                     setup.worker_processes > 0
                         ? std::to_string(setup.worker_processes)
                         : std::string("auto"));
  std::string p = setup.prefix.str().empty() ? "" : setup.prefix.str() + "/";
  out += fmt::format("pid {}nginx.pid;\nerror_log {}error.log warn;\n", p, p);
  // Old workers finish their requests after a change for the drain
  // timeout; a language model's streams for as long as one may idle, so
  // that no route change cuts a generation (issue 89: every reload cut the
  // streams older than the drain timeout).
  out += fmt::format("worker_shutdown_timeout {}s;\n",
                     WholeSeconds(openai ? std::max(setup.drain_timeout,
                                                    setup.llm_idle_timeout)
                                         : setup.drain_timeout));
  out += "events {\n  worker_connections 8192;\n}\nhttp {\n  access_log off;\n";
  // Model servers bound their own requests (images, tensors).
  out += "  client_max_body_size 0;\n";
  for (const char* temp :
       {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    out += fmt::format("  {}_temp_path {}{}_temp;\n", temp, p, temp);
  }
  out += Upstreams(config, setup, false);
  if (setup.grpc_listen) out += Upstreams(config, setup, true);
  out += ServiceMaps(config);
  if (openai) {
    out += fmt::format("  js_import migserve_openai from {};\n",
                       OpenAiScriptPath(setup));
    out += "  js_var $migserve_openai_model;\n";
    out += "  js_var $migserve_openai_session;\n";
    // Bodies of 1 MB or more, or chunked (of unknown size), counted
    // together across workers (LargeBodiesAtOnce); others are not counted.
    out +=
        "  map \"$http_transfer_encoding:$content_length\" "
        "$migserve_large_body {\n    default \"\";\n"
        "    \"~chunked\" \"large\";\n    \"~:[0-9]{7,}$\" \"large\";\n  }\n"
        "  limit_conn_zone $migserve_large_body "
        "zone=migserve_large_bodies:1m;\n";
    out += OpenAiMaps(config, names);
  }
  out += HttpServer(config, setup, names);
  if (setup.grpc_listen) out += GrpcServer(setup);
  out += "}\n";
  return out;
}

int LargeBodiesAtOnce(const NginxSetup& setup) {
  constexpr int kReservedMb = 96;
  return std::max(1, (setup.memory_limit_mb - kReservedMb) /
                         (2 * setup.llm_max_body_mb + 1));
}

bool NeedsOpenAiScript(const ProxyConfig& config) {
  for (const ProxyUpstream& u : config.upstreams) {
    if (u.openai) return true;
  }
  return false;
}

std::string OpenAiScriptPath(const NginxSetup& setup) {
  if (!setup.js_script.str().empty()) return setup.js_script.str();
  const std::string& prefix = setup.prefix.str();
  return (prefix.empty() ? "" : prefix + "/") + "migserve-openai.js";
}

std::string OpenAiScript() { return kEmbeddedOpenAiScript; }

}  // namespace migserve::proxy
