#include "boundary/endpoint.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

namespace migserve {
namespace {

// `text` quoted and escaped for a message (JSON's rules: no control
// character reaches the terminal).
std::string Quoted(std::string_view text) {
  return nlohmann::json(std::string(text.substr(0, 80)))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status NotAPort(long port) {
  return Status::InvalidArgument(
      fmt::format("port {} is not a TCP port (1 to 65535)", port));
}

}  // namespace

bool IsPlainHost(std::string_view s) {
  return !s.empty() && s.size() <= 253 &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                  c == '_' || c == '.';
         });
}

bool IsIpAddress(std::string_view s) {
  if (s.size() > 64) return false;
  std::string text(s);  // inet_pton reads to a NUL: one inside is refused
  if (text.find('\0') != std::string::npos) return false;
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), address) == 1 ||
         inet_pton(AF_INET6, text.c_str(), address) == 1;
}

bool IsPort(long port) { return port >= 1 && port <= 65535; }

StatusOr<Endpoint> Endpoint::Parse(std::string_view host, long port) {
  if (!IsPlainHost(host) && !IsIpAddress(host)) {
    return Status::InvalidArgument(fmt::format(
        "address {} is not an IP address or host name", Quoted(host)));
  }
  if (!IsPort(port)) return NotAPort(port);
  return Endpoint(std::string(host), static_cast<int>(port));
}

StatusOr<Endpoint> Endpoint::ParseIp(std::string_view ip, long port) {
  if (!IsIpAddress(ip)) {
    return Status::InvalidArgument(
        fmt::format("address {} is not an IP address", Quoted(ip)));
  }
  if (!IsPort(port)) return NotAPort(port);
  return Endpoint(std::string(ip), static_cast<int>(port));
}

StatusOr<Endpoint> Endpoint::ParseListen(std::string_view text,
                                         std::string_view any_host) {
  std::string_view host = any_host;
  std::string_view port = text;
  if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string_view::npos) {
      host = "";  // an IPv6 address without brackets: the port is unclear
    }
  }
  long value = 0;
  bool digits = !port.empty() && port.size() <= 5 &&
                std::all_of(port.begin(), port.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    return Status::InvalidArgument(
        fmt::format("{} is not PORT, HOST:PORT or [IPV6]:PORT", Quoted(text)));
  }
  for (char c : port) value = value * 10 + (c - '0');
  return Parse(host, value);
}

std::string Endpoint::HostPort() const {
  bool v6 = host_.find(':') != std::string::npos;
  return v6 ? fmt::format("[{}]:{}", host_, port_)
            : fmt::format("{}:{}", host_, port_);
}

StatusOr<Endpoint> Endpoint::AtPort(long port) const {
  if (!IsPort(port)) return NotAPort(port);
  return Endpoint(host_, static_cast<int>(port));
}

}  // namespace migserve
