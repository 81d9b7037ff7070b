// The seam between the controller and the system that routes requests to
// replicas (routing.h): a Gateway API HTTPRoute on Kubernetes, a recording
// double in tests. The controller calls it at every change of a service's
// routed replicas (docs/serving.md).
#ifndef MIGSERVE_CLUSTER_ROUTER_H_
#define MIGSERVE_CLUSTER_ROUTER_H_

#include "cluster/routing.h"
#include "util/status_or.h"

namespace migserve::cluster {

class Router {
 public:
  virtual ~Router() = default;

  // Makes `route` the live route of its service, and returns whether that
  // changed anything (false: the live route already was `route`, nothing was
  // written). Returns an error if the route cannot be read or written.
  virtual StatusOr<bool> SetRoute(const ServiceRoute& route) = 0;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_ROUTER_H_
