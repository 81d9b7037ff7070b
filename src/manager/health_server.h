// What an operator watches of a running controller, served over HTTP:
// /metrics (Prometheus text), /progress (JSON) and /healthz (200 "ok", or
// 503 with the last reconcile's error), all read from the Reconciler.
#ifndef MIGSERVE_MANAGER_HEALTH_SERVER_H_
#define MIGSERVE_MANAGER_HEALTH_SERVER_H_

#include <string>

#include "controller/reconciler.h"
#include "util/status.h"
#include "util/status_server.h"

namespace migserve::manager {

class HealthServer {
 public:
  // `reconciler` is not owned and outlives the server.
  explicit HealthServer(const controller::Reconciler* reconciler);

  // Listens on address:port (port 0: a free one) and serves on a thread of
  // its own; Unavailable if it cannot listen there.
  Status Start(const std::string& address, int port) {
    return server_.Start(address, port);
  }
  // The port it listens on, once started.
  int port() const { return server_.port(); }

 private:
  StatusServer server_;
};

}  // namespace migserve::manager

#endif  // MIGSERVE_MANAGER_HEALTH_SERVER_H_
