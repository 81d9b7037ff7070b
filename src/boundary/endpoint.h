// Where a replica or a proxy answers, as a value that can only be made by
// checking it (docs/design.md, "The boundary"): an IP address literal or a
// plain host name, and a TCP port. nginx's server lines and every address
// migserve writes come from an Endpoint, so a pod's status.podIP or a CSV
// row cannot carry ';', '{' or a second directive into a configuration.
#ifndef MIGSERVE_BOUNDARY_ENDPOINT_H_
#define MIGSERVE_BOUNDARY_ENDPOINT_H_

#include <string>
#include <string_view>

#include "util/status_or.h"

namespace migserve {

// Whether `s` is a host nginx takes in a server line without quoting:
// letters, digits, '-', '_' or '.', at most 253 (an IPv4 address or a host
// name).
bool IsPlainHost(std::string_view s);
// Whether `s` is an IPv4 or IPv6 address literal (inet_pton).
bool IsIpAddress(std::string_view s);
// Whether `port` is a TCP port, 1 to 65535.
bool IsPort(long port);

class Endpoint {
 public:
  // An IP address literal or a plain host name, and a TCP port; else
  // InvalidArgument saying which is wrong ("address ... is not an IP
  // address or host name", "port 99999999 is not a TCP port (1 to 65535)").
  static StatusOr<Endpoint> Parse(std::string_view host, long port);
  // "PORT", "HOST:PORT" or "[IPV6]:PORT", as nginx's `listen` and a
  // --listen flag take it; a bare port is on `any_host`.
  static StatusOr<Endpoint> ParseListen(std::string_view text,
                                        std::string_view any_host = "0.0.0.0");
  // Only an IP address literal (what a pod's status.podIP always is).
  static StatusOr<Endpoint> ParseIp(std::string_view ip, long port);

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // host:port as a server line or a URL takes it (an IPv6 address in
  // brackets).
  std::string HostPort() const;
  // The same host at `port` (a replica's gRPC port).
  StatusOr<Endpoint> AtPort(long port) const;

  bool operator==(const Endpoint&) const = default;

 private:
  Endpoint(std::string host, int port) : host_(std::move(host)), port_(port) {}
  std::string host_;
  int port_;
};

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_ENDPOINT_H_
