// The HTTP endpoint of a long-running command's own state (the
// controller's and the autoscaler's /metrics and /healthz): GET pages
// whose bodies come from callbacks, served on a thread of its own.
#ifndef MIGSERVE_UTIL_STATUS_SERVER_H_
#define MIGSERVE_UTIL_STATUS_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "util/status.h"

namespace httplib {
class Server;
}

namespace migserve {

class StatusServer {
 public:
  StatusServer();
  // Stops serving and joins the server's thread.
  ~StatusServer();
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  // Serves GET `path` with what `body` returns, as `content_type`. Before
  // Start.
  void Page(const std::string& path, const std::string& content_type,
            std::function<std::string()> body);
  // Serves GET /healthz: 200 "ok", or 503 with the message of what
  // `health` returns. Before Start.
  void Health(std::function<Status()> health);

  // Listens on address:port (port 0: a free one) and serves on a thread of
  // its own; Unavailable "cannot listen on ADDRESS:PORT" if it cannot.
  Status Start(const std::string& address, int port);
  // The port it listens on, once started.
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_STATUS_SERVER_H_
