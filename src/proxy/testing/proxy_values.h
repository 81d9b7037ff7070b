// Tests' way to write a ProxyConfig: its names and addresses are checked
// values (boundary/), which a test makes from literals here; a literal that
// is not one fails the test at once.
#ifndef MIGSERVE_PROXY_TESTING_PROXY_VALUES_H_
#define MIGSERVE_PROXY_TESTING_PROXY_VALUES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proxy/proxy_config.h"

namespace migserve::proxy {

// `value` of a checked type, or the test's end.
template <typename T>
T Must(StatusOr<T> value) {
  if (!value.ok()) {
    ADD_FAILURE() << value.status().message();
    std::abort();
  }
  return *std::move(value);
}

// 127.0.0.1 at `port`: where a test's nginx listens.
inline Endpoint Local(int port) {
  return Must(Endpoint::Parse("127.0.0.1", port));
}

// A test's run directory for nginx.
inline ConfigWord RunDir(const std::string& path) {
  return Must(ConfigWord::Parse(path));
}

inline ProxyBackend Backend(const std::string& host, int port, long weight = 1,
                            int grpc_port = 0) {
  Endpoint http = Must(Endpoint::Parse(host, port));
  return {http, weight,
          grpc_port != 0 ? std::optional(Must(http.AtPort(grpc_port)))
                         : std::nullopt};
}

inline ProxyUpstream Upstream(const std::string& service,
                              const std::string& model,
                              std::vector<ProxyBackend> backends,
                              bool openai = false) {
  return {Must(ServiceName::Parse(service)), Must(ModelName::Parse(model)),
          std::move(backends), openai};
}

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_PROXY_VALUES_H_
