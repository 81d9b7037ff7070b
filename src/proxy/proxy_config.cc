#include "proxy/proxy_config.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "util/json_fields.h"

namespace migserve::proxy {
namespace {

using nlohmann::json;

Status ReadBackend(const JsonFields& f, ProxyBackend* b) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("address", true, &b->address));
  if (!IsPlainHost(b->address)) {
    return f.Error("address", "must be an IP address or host name");
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("port", true, &b->port));
  if (!IsPort(b->port)) {
    return f.Error("port", fmt::format("must be 1 to 65535, got {}", b->port));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("weight", true, &b->weight));
  if (b->weight < 1 || b->weight > cluster::kMaxRouteWeight) {
    return f.Error("weight", fmt::format("must be 1 to {}, got {}",
                                         cluster::kMaxRouteWeight, b->weight));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("grpc_port", false, &b->grpc_port));
  if (b->grpc_port < 0 || b->grpc_port > 65535) {
    return f.Error("grpc_port",
                   fmt::format("must be 0 to 65535, got {}", b->grpc_port));
  }
  return Status::Ok();
}

Status ReadUpstream(const JsonFields& f, ProxyUpstream* u) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &u->service));
  MIGSERVE_RETURN_IF_ERROR(f.Get("model", true, &u->model));
  MIGSERVE_RETURN_IF_ERROR(f.CheckPlainName("service", u->service));
  MIGSERVE_RETURN_IF_ERROR(f.CheckPlainName("model", u->model));
  std::string api = "kserve";
  MIGSERVE_RETURN_IF_ERROR(f.Get("api", false, &api));
  if (api != "kserve" && api != "openai") {
    return f.Error("api", "must be kserve (the default) or openai, got " + api);
  }
  u->openai = api == "openai";
  return f.Objects("backends", ReadBackend, &u->backends);
}

}  // namespace

bool IsPlainHost(const std::string& s) {
  return !s.empty() && s.size() <= 253 &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                  c == '_' || c == '.';
         });
}

bool IsIpAddress(const std::string& s) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), address) == 1 ||
         inet_pton(AF_INET6, s.c_str(), address) == 1;
}

bool IsPort(long port) { return port >= 1 && port <= 65535; }

long NginxWeight(double replica_weight) {
  if (!(replica_weight > 0)) return 1;
  return std::clamp<long>(std::lround(replica_weight), 1,
                          cluster::kMaxRouteWeight);
}

StatusOr<ProxyConfig> ParseProxyConfig(const std::string& text,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(json root, ParseJsonObject(text, source));
  JsonFields f(root, source, "");
  ProxyConfig config;
  MIGSERVE_RETURN_IF_ERROR(f.Get("generation", true, &config.generation));
  if (config.generation < 0) return f.Error("generation", "must be >= 0");
  MIGSERVE_RETURN_IF_ERROR(
      f.Objects("services", ReadUpstream, &config.upstreams));
  std::set<std::string> services;
  for (size_t i = 0; i < config.upstreams.size(); ++i) {
    const ProxyUpstream& u = config.upstreams[i];
    if (!services.insert(u.service).second) {
      return Status::InvalidArgument(
          fmt::format("{}: services[{}].service: '{}' is listed twice", source,
                      i, u.service));
    }
  }
  return config;
}

std::string FormatProxyConfig(const ProxyConfig& config) {
  json services = json::array();
  for (const ProxyUpstream& u : config.upstreams) {
    json backends = json::array();
    for (const ProxyBackend& b : u.backends) {
      json backend = {
          {"address", b.address}, {"port", b.port}, {"weight", b.weight}};
      if (b.grpc_port > 0) backend["grpc_port"] = b.grpc_port;
      backends.push_back(backend);
    }
    json service = {
        {"service", u.service}, {"model", u.model}, {"backends", backends}};
    if (u.openai) service["api"] = "openai";
    services.push_back(service);
  }
  json out = {{"generation", config.generation}, {"services", services}};
  return out.dump(2) + "\n";
}

}  // namespace migserve::proxy
