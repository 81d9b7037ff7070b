#include "proxy/testing/local_nginx.h"

#include <cstdlib>

namespace migserve::proxy {

std::string NginxBinary() {
  const char* env = std::getenv("MIGSERVE_NGINX");
  return env != nullptr ? env : "/usr/sbin/nginx";
}

}  // namespace migserve::proxy
