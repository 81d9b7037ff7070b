// What the parts of the proxy's nginx configuration share (nginx_config.cc
// writes the upstreams, maps and servers; nginx_openai.cc the OpenAI API's
// maps and locations): the route tokens besides services, and small
// helpers on an upstream.
#ifndef MIGSERVE_PROXY_NGINX_PARTS_H_
#define MIGSERVE_PROXY_NGINX_PARTS_H_

#include <algorithm>
#include <cmath>
#include <string>

#include "proxy/nginx_config.h"

namespace migserve::proxy {

// What a request is routed to, besides a service: tokens no plain name
// (boundary/plain_name.h) can be, so no service collides with them.
inline constexpr char kUnknown[] = "!unknown";  // a header naming no service
inline constexpr char kAmbiguous[] =
    "!ambiguous";                           // a model of several services
inline constexpr char kEmpty[] = "!empty";  // a service without replicas

// `d` as nginx's time takes it: whole seconds, at least 1.
inline long WholeSeconds(Duration d) {
  return std::max(1L, std::lround(d.value()));
}

inline bool HasGrpc(const ProxyUpstream& u) {
  for (const ProxyBackend& b : u.backends) {
    if (b.grpc) return true;
  }
  return false;
}

// `u`'s route token for HTTP or gRPC: the service, or kEmpty when it has no
// replica there.
inline std::string RouteOf(const ProxyUpstream& u, bool grpc) {
  return (grpc ? HasGrpc(u) : !u.backends.empty()) ? u.service.str() : kEmpty;
}

// A plain name (boundary/plain_name.h) as a regular expression: '.' is its only
// character with a meaning there.
inline std::string Literal(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '.' ? std::string("[.]") : std::string(1, c);
  return out;
}

// Whether `u`'s HTTP requests keep to their conversation's replica.
inline bool Affine(const ProxyUpstream& u, const NginxSetup& setup) {
  return u.openai && u.affinity && setup.llm_affinity && !setup.random;
}

inline bool AnyAffine(const ProxyConfig& config, const NginxSetup& setup) {
  for (const ProxyUpstream& u : config.upstreams) {
    if (Affine(u, setup)) return true;
  }
  return false;
}

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_PARTS_H_
