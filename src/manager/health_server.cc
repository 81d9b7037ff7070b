#include "manager/health_server.h"

namespace migserve::manager {

HealthServer::HealthServer(const controller::Reconciler* reconciler) {
  server_.Page("/metrics", "text/plain; version=0.0.4",
               [reconciler] { return reconciler->Metrics(); });
  server_.Page("/progress", "application/json",
               [reconciler] { return reconciler->Progress().dump(2) + "\n"; });
  server_.Health([reconciler] { return reconciler->Health(); });
}

}  // namespace migserve::manager
