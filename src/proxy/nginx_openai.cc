#include "proxy/nginx_openai.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "proxy/nginx_parts.h"

namespace migserve::proxy {
namespace {

// The names `u`'s replicas answer to: its service, its model, the model's
// aliases (llm::ServedNames's order).
std::vector<std::string> ServedNamesOf(const ProxyUpstream& u) {
  std::vector<std::string> names = {u.service.str(), u.model.str()};
  for (const ServedName& a : u.aliases) names.push_back(a.str());
  return names;
}

// An OpenAI-style error body (`{"error": {...}}`) as an nginx string.
std::string OpenAiError(const char* message, const char* type,
                        const char* code) {
  return fmt::format(
      "'{{\"error\": {{\"message\": \"{}\", \"type\": \"{}\", "
      "\"code\": \"{}\"}}}}\n'",
      message, type, code);
}

// Every name a request may give, as vLLM lists its served names: the
// entries of /v1/models's `data`.
std::string ModelEntries(const ProxyConfig& config, const OpenAiNames& names) {
  std::string models;
  for (const ProxyUpstream& u : config.upstreams) {
    if (!u.openai) continue;
    auto of = names.of_service.find(u.service.str());
    if (of == names.of_service.end()) continue;
    for (const std::string& name : of->second) {
      models += fmt::format(
          "{}{{\"id\": \"{}\", \"object\": \"model\", \"created\": 0, "
          "\"owned_by\": \"migserve\", \"root\": \"{}\"}}",
          models.empty() ? "" : ", ", name, u.model.str());
    }
  }
  return models;
}

// How @migserve_openai passes a request on, streamed as the replica sends
// it, and where it ends: with an affine service, the spill location too.
std::string OpenAiPass(const ProxyConfig& config, const NginxSetup& setup) {
  const std::string pass = fmt::format(
      "      proxy_http_version 1.1;\n"
      "      proxy_set_header Connection \"\";\n"
      "      proxy_buffering off;\n"
      "      proxy_cache off;\n"
      "      proxy_read_timeout {}s;\n"
      "      proxy_send_timeout {}s;\n",
      WholeSeconds(setup.llm_idle_timeout),
      WholeSeconds(setup.llm_idle_timeout));
  std::string out =
      "      proxy_pass http://migserve_$migserve_openai_service;\n" + pass;
  if (!AnyAffine(config, setup)) return out + "    }\n";
  // Every replica of the ring with its batch in flight (nginx's 502 "no
  // live upstreams", before any byte is sent): the replica with the
  // fewest requests in flight per weight takes it, as without affinity.
  // (A service without affinity tries its replicas a second round.)
  return out +
         "      error_page 502 = @migserve_openai_spill;\n    }\n"
         "    location @migserve_openai_spill {\n"
         "      keepalive_timeout 0;\n"
         "      default_type application/json;\n"
         "      proxy_pass http://migserve_spill_$migserve_openai_service;\n" +
         pass + "    }\n";
}

}  // namespace

OpenAiNames NamesOf(const ProxyConfig& config) {
  std::map<std::string, std::vector<const ProxyUpstream*>> claims;
  std::vector<std::string> order;
  auto claim = [&](const std::string& name, const ProxyUpstream* u) {
    auto& by = claims[name];
    if (by.empty()) order.push_back(name);
    if (std::find(by.begin(), by.end(), u) == by.end()) by.push_back(u);
  };
  std::set<std::string> services;
  for (const ProxyUpstream& u : config.upstreams) {
    if (u.openai) services.insert(u.service.str());
  }
  for (const ProxyUpstream& u : config.upstreams) {
    if (!u.openai) continue;
    for (const std::string& name : ServedNamesOf(u)) {
      // A service's name is its own, whoever else serves it.
      if (name == u.service.str() || !services.count(name)) claim(name, &u);
    }
  }
  OpenAiNames out;
  for (const std::string& name : order) {
    const auto& by = claims[name];
    std::string route = services.count(name) ? name : "";
    const ProxyUpstream* owner = nullptr;
    for (const ProxyUpstream* u : by) {
      if (u->service.str() == name) owner = u;
    }
    if (owner == nullptr && by.size() == 1) owner = by[0];
    out.routes.emplace_back(
        name, owner ? RouteOf(*owner, false) : std::string(kAmbiguous));
    if (owner) out.of_service[owner->service.str()].push_back(name);
  }
  return out;
}

// The maps that pick a language model's service: with the header, the
// service it names if the body's model is one of the names its replicas
// answer to (or none: vLLM serves its first); else the body's `model`.
// Names are matched as vLLM compares them, letter case included: a regular
// expression each (nginx's map lowers the case of plain keys).
std::string OpenAiMaps(const ProxyConfig& config, const OpenAiNames& names) {
  std::string out = fmt::format(
      "  map $http_migserve_service $migserve_openai_service {{\n"
      "    \"\" $migserve_openai_by_model;\n"
      "    default $migserve_openai_by_header;\n  }}\n"
      "  map \"$http_migserve_service $migserve_openai_model\" "
      "$migserve_openai_by_header {{\n    default \"{}\";\n",
      kUnknown);
  for (const ProxyUpstream& u : config.upstreams) {
    if (!u.openai) continue;
    std::string any;
    for (const std::string& name : ServedNamesOf(u)) any += "|" + Literal(name);
    out += fmt::format("    \"~^{} ({})$\" \"{}\";\n", Literal(u.service.str()),
                       any, RouteOf(u, false));
  }
  out += fmt::format(
      "  }}\n  map $migserve_openai_model $migserve_openai_by_model {{\n"
      "    default \"{}\";\n",
      kUnknown);
  for (const auto& [name, route] : names.routes) {
    out += fmt::format("    \"~^{}$\" \"{}\";\n", Literal(name), route);
  }
  return out + "  }\n";
}

// /v1/...: the script reads the body and notes its model, then the named
// location routes it, streaming the answer as the replica sends it. The
// body's buffer is larger than the largest body taken, so a chunked body
// is found too large before it would spill to a file, and every body is
// read in memory: what the script gets is all of it. Past the limit,
// sized or chunked, the answer is OpenAI's error object. No connection is
// kept alive after an answer: a reload's old worker closes one as its
// stream ends, and a client that sent its next request on it at that
// moment got a connection error (the official SDK's APIConnectionError,
// about 1 in 400 streams across route changes); a connection per
// generation costs nothing beside it.
std::string OpenAiLocations(const ProxyConfig& config, const NginxSetup& setup,
                            const OpenAiNames& names) {
  std::string out = fmt::format(
      "    location = /v1/models {{\n"
      "      default_type application/json;\n"
      "      return 200 '{{\"object\": \"list\", \"data\": [{}]}}\n';\n"
      "    }}\n"
      "    location /v1/ {{\n"
      "      keepalive_timeout 0;\n"
      "      client_max_body_size {}m;\n"
      "      client_body_buffer_size {}m;\n"
      "      client_body_in_single_buffer on;\n"
      "      limit_conn migserve_large_bodies {};\n"
      "      limit_conn_status 429;\n"
      "      error_page 413 = @migserve_openai_too_large;\n"
      "      error_page 429 = @migserve_openai_busy;\n"
      "      js_content migserve_openai.route;\n"
      "    }}\n"
      "    location @migserve_openai_too_large {{\n"
      "      default_type application/json;\n"
      "      return 413 {};\n"
      "    }}\n"
      "    location @migserve_openai_busy {{\n"
      "      default_type application/json;\n"
      "      add_header Retry-After 1 always;\n"
      "      return 429 {};\n"
      "    }}\n"
      "    location @migserve_openai {{\n"
      "      keepalive_timeout 0;\n"
      "      default_type application/json;\n",
      ModelEntries(config, names), setup.llm_max_body_mb,
      setup.llm_max_body_mb + 1, LargeBodiesAtOnce(setup),
      OpenAiError(
          fmt::format("the request body is larger than the proxy reads to "
                      "route it ({} MiB)",
                      setup.llm_max_body_mb)
              .c_str(),
          "invalid_request_error", "body_too_large"),
      OpenAiError(fmt::format("the proxy holds {} requests of 1 MB or more "
                              "at once; try again",
                              LargeBodiesAtOnce(setup))
                      .c_str(),
                  "rate_limit_error", "too_many_large_bodies"));
  struct Refusal {
    const char* token;
    int status;
    std::string body;
  } refusals[] = {
      {kUnknown, 404,
       OpenAiError("no service serves this model (body model, or header "
                   "migserve-service)",
                   "invalid_request_error", "model_not_found")},
      {kAmbiguous, 400,
       OpenAiError("several services serve this model: name the service as "
                   "the model",
                   "invalid_request_error", "model_ambiguous")},
      {kEmpty, 503,
       OpenAiError("the service has no replica", "service_unavailable",
                   "no_replica")},
  };
  for (const Refusal& r : refusals) {
    out += fmt::format(
        "      if ($migserve_openai_service = \"{}\") {{\n"
        "        return {} {};\n      }}\n",
        r.token, r.status, r.body);
  }
  return out + OpenAiPass(config, setup);
}

}  // namespace migserve::proxy
