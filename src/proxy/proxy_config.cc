#include "proxy/proxy_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "boundary/json_fields.h"

namespace migserve::proxy {
namespace {

using nlohmann::json;

StatusOr<ProxyBackend> ReadBackend(const JsonFields& f) {
  std::string address;
  long port = 0;
  MIGSERVE_RETURN_IF_ERROR(f.Get("address", true, &address));
  if (!IsPlainHost(address) && !IsIpAddress(address)) {
    return f.Error("address", "must be an IP address or host name");
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("port", true, &port));
  StatusOr<Endpoint> http = Endpoint::Parse(address, port);
  if (!http.ok()) {
    return f.Error("port", fmt::format("must be 1 to 65535, got {}", port));
  }
  ProxyBackend b{*http};
  MIGSERVE_RETURN_IF_ERROR(f.Get("weight", true, &b.weight));
  if (b.weight < 1 || b.weight > cluster::kMaxRouteWeight) {
    return f.Error("weight", fmt::format("must be 1 to {}, got {}",
                                         cluster::kMaxRouteWeight, b.weight));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("max_conns", false, &b.max_conns));
  if (b.max_conns < 0 || b.max_conns > kMaxBackendConns) {
    return f.Error("max_conns", fmt::format("must be 0 to {}, got {}",
                                            kMaxBackendConns, b.max_conns));
  }
  long grpc_port = 0;
  MIGSERVE_RETURN_IF_ERROR(f.Get("grpc_port", false, &grpc_port));
  if (grpc_port != 0) {
    StatusOr<Endpoint> grpc = http->AtPort(grpc_port);
    if (!grpc.ok()) {
      return f.Error("grpc_port",
                     fmt::format("must be 0 to 65535, got {}", grpc_port));
    }
    b.grpc = *grpc;
  }
  return b;
}

StatusOr<ProxyUpstream> ReadUpstream(const JsonFields& f) {
  MIGSERVE_ASSIGN_OR_RETURN(ServiceName service,
                            f.GetChecked<ServiceName>("service"));
  MIGSERVE_ASSIGN_OR_RETURN(ModelName model, f.GetChecked<ModelName>("model"));
  ProxyUpstream u{std::move(service), std::move(model), {}};
  std::string api = "kserve";
  MIGSERVE_RETURN_IF_ERROR(f.Get("api", false, &api));
  if (api != "kserve" && api != "openai") {
    return f.Error("api", "must be kserve (the default) or openai, got " + api);
  }
  u.openai = api == "openai";
  MIGSERVE_RETURN_IF_ERROR(f.CheckedList("aliases", &u.aliases));
  MIGSERVE_RETURN_IF_ERROR(f.Get("affinity", false, &u.affinity));
  MIGSERVE_RETURN_IF_ERROR(f.ObjectsMade("backends", ReadBackend, &u.backends));
  return u;
}

}  // namespace

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
      f.ObjectsMade("services", ReadUpstream, &config.upstreams));
  std::set<ServiceName> services;
  for (size_t i = 0; i < config.upstreams.size(); ++i) {
    const ProxyUpstream& u = config.upstreams[i];
    if (!services.insert(u.service).second) {
      return Status::InvalidArgument(
          fmt::format("{}: services[{}].service: '{}' is listed twice", source,
                      i, u.service.str()));
    }
  }
  return config;
}

std::string FormatProxyConfig(const ProxyConfig& config) {
  json services = json::array();
  for (const ProxyUpstream& u : config.upstreams) {
    json backends = json::array();
    for (const ProxyBackend& b : u.backends) {
      json backend = {{"address", b.http.host()},
                      {"port", b.http.port()},
                      {"weight", b.weight}};
      if (b.grpc) backend["grpc_port"] = b.grpc->port();
      if (b.max_conns > 0) backend["max_conns"] = b.max_conns;
      backends.push_back(backend);
    }
    json service = {{"service", u.service.str()},
                    {"model", u.model.str()},
                    {"backends", backends}};
    if (u.openai) service["api"] = "openai";
    if (!u.aliases.empty()) {
      json aliases = json::array();
      for (const ServedName& alias : u.aliases) aliases.push_back(alias.str());
      service["aliases"] = aliases;
    }
    if (u.affinity) service["affinity"] = true;
    services.push_back(service);
  }
  json out = {{"generation", config.generation}, {"services", services}};
  return out.dump(2) + "\n";
}

}  // namespace migserve::proxy
