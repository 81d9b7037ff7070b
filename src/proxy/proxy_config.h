// What the proxy that carries a service's traffic is told (docs/serving.md,
// "The proxy"): for each service its replicas' addresses and weights, and a
// generation that grows with every change. migserve is the proxy's control
// plane: it renders this as an NGINX configuration (nginx_config.h), whose
// upstreams use nginx's smooth weighted round robin with `weight=`, the
// rotation the `proxy` router's credits assume (queueing/traffic.h).
#ifndef MIGSERVE_PROXY_PROXY_CONFIG_H_
#define MIGSERVE_PROXY_PROXY_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "boundary/checked_name.h"
#include "boundary/endpoint.h"
#include "cluster/routing.h"
#include "util/status_or.h"

namespace migserve::proxy {

// The largest ProxyBackend::max_conns: more than any engine runs at once
// (nginx's worker_connections is 8192).
inline constexpr long kMaxBackendConns = 65536;

// Every name and address here is a checked value (boundary/): the
// configuration nginx reads is written from nothing else.
struct ProxyBackend {
  Endpoint http;    // where it takes HTTP requests
  long weight = 1;  // NginxWeight of its cluster::ReplicaWeight
  std::optional<Endpoint> grpc = std::nullopt;  // none: it takes no gRPC
  // The requests it takes at once where the proxy keeps conversations on
  // replicas (a language model's: its batch, vLLM's max_num_seqs); past
  // it, the next replica of the conversation's ring takes them. 0: no
  // bound.
  long max_conns = 0;
  bool operator==(const ProxyBackend&) const = default;
};

struct ProxyUpstream {
  ServiceName service;
  // Requests with the header `migserve-service: <service>` reach the
  // service, and so do requests to /v2/models/<model>... without the
  // header when no other service serves the model (nginx_config.h).
  ModelName model;
  std::vector<ProxyBackend> backends;
  // A language model's service (kind: llm): its replicas serve the OpenAI
  // API (/v1/...), reached by the request body's `model` (the service, or
  // its model where no other service serves it) or the header, streamed
  // unbuffered, balanced by requests in flight per weight.
  bool openai = false;
  // The other names an OpenAI service's replicas answer to (its model's
  // aliases, kubernetes::ProxyRoute::aliases): routed to it like its model,
  // where no other service claims them, and listed by /v1/models.
  std::vector<ServedName> aliases = {};
  // An OpenAI service whose conversations keep to their replicas
  // (kubernetes::ProxyRoute::affinity; nginx_config.h).
  bool affinity = false;
  bool operator==(const ProxyUpstream&) const = default;
};

struct ProxyConfig {
  long generation = 0;
  std::vector<ProxyUpstream> upstreams;  // one per service
  bool operator==(const ProxyConfig&) const = default;
};

// `replica_weight` (cluster::ReplicaWeight) as nginx takes it: a whole
// number from 1 to cluster::kMaxRouteWeight, rounded.
long NginxWeight(double replica_weight);

// Reads a proxy configuration (JSON, docs/formats.md): `generation` and
// `services: [{service, model, api, aliases, backends: [{address, port,
// weight, grpc_port, max_conns}]}]` (grpc_port, max_conns and aliases
// optional; api `kserve` (the
// default) or `openai`). Services are named once each; two
// may serve one model.
// Returns InvalidArgument naming `source` and the field at fault.
StatusOr<ProxyConfig> ParseProxyConfig(const std::string& text,
                                       const std::string& source);
std::string FormatProxyConfig(const ProxyConfig& config);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_PROXY_CONFIG_H_
