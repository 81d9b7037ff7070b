// What the proxy that carries a service's traffic is told (docs/serving.md,
// "The proxy"): for each service its replicas' addresses and weights, and a
// generation that grows with every change. migserve is the proxy's control
// plane: it renders this as an NGINX configuration (nginx_config.h), whose
// upstreams use nginx's smooth weighted round robin with `weight=`, the
// rotation the `proxy` router's credits assume (queueing/traffic.h).
#ifndef MIGSERVE_PROXY_PROXY_CONFIG_H_
#define MIGSERVE_PROXY_PROXY_CONFIG_H_

#include <string>
#include <vector>

#include "cluster/routing.h"
#include "util/status_or.h"

namespace migserve::proxy {

struct ProxyBackend {
  std::string address;  // IP or host name
  int port = 0;
  long weight = 1;    // NginxWeight of its cluster::ReplicaWeight
  int grpc_port = 0;  // its gRPC port; 0: it takes no gRPC requests
  bool operator==(const ProxyBackend&) const = default;
};

struct ProxyUpstream {
  std::string service;
  // Requests with the header `migserve-service: <service>` reach the
  // service, and so do requests to /v2/models/<model>... without the
  // header when no other service serves the model (nginx_config.h).
  std::string model;
  std::vector<ProxyBackend> backends;
  // A language model's service (kind: llm): its replicas serve the OpenAI
  // API (/v1/...), reached by the request body's `model` (the service, or
  // its model where no other service serves it) or the header, streamed
  // unbuffered, balanced by requests in flight per weight.
  bool openai = false;
  bool operator==(const ProxyUpstream&) const = default;
};

struct ProxyConfig {
  long generation = 0;
  std::vector<ProxyUpstream> upstreams;  // one per service
  bool operator==(const ProxyConfig&) const = default;
};

// Whether `s` is an address nginx takes in a server line without quoting:
// letters, digits, '-', '_' or '.' (an IPv4 address or a host name).
bool IsPlainHost(const std::string& s);
// Whether `s` is an IPv4 or IPv6 address literal, as a pod's status.podIP
// always is (inet_pton): nothing else from a pod reaches a server line.
bool IsIpAddress(const std::string& s);
// Whether `port` is a TCP port, 1 to 65535.
bool IsPort(long port);

// `replica_weight` (cluster::ReplicaWeight) as nginx takes it: a whole
// number from 1 to cluster::kMaxRouteWeight, rounded.
long NginxWeight(double replica_weight);

// Reads a proxy configuration (JSON, docs/formats.md): `generation` and
// `services: [{service, model, api, backends: [{address, port, weight,
// grpc_port}]}]` (grpc_port optional; api `kserve` (the default) or
// `openai`). Services are named once each; two
// may serve one model.
// Returns InvalidArgument naming `source` and the field at fault.
StatusOr<ProxyConfig> ParseProxyConfig(const std::string& text,
                                       const std::string& source);
std::string FormatProxyConfig(const ProxyConfig& config);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_PROXY_CONFIG_H_
