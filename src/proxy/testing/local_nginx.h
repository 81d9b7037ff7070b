// What the tests need to run the real nginx on 127.0.0.1: its binary
// (free ports: util/test_util.h).
#ifndef MIGSERVE_PROXY_TESTING_LOCAL_NGINX_H_
#define MIGSERVE_PROXY_TESTING_LOCAL_NGINX_H_

#include <string>

namespace migserve::proxy {

// $MIGSERVE_NGINX, else Debian's /usr/sbin/nginx (tools/install-deps.sh).
std::string NginxBinary();

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_LOCAL_NGINX_H_
