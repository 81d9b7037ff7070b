#include "util/testing/http_listener.h"

#include <httplib.h>

#include <chrono>

namespace migserve::testing {

std::thread ListenOnLocalPort(httplib::Server* server, int* port) {
  *port = server->bind_to_any_port("127.0.0.1");
  if (*port <= 0) return {};
  std::thread listener([server] { server->listen_after_bind(); });
  while (!server->is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return listener;
}

}  // namespace migserve::testing
