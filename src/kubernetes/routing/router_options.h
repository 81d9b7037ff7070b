// What the controller's route keepers on Kubernetes share (docs/serving.md):
// where the routes live, the serving spec, each service's model, and which
// data plane the target's router kind runs (queueing/router_kind.h).
#ifndef MIGSERVE_KUBERNETES_ROUTING_ROUTER_OPTIONS_H_
#define MIGSERVE_KUBERNETES_ROUTING_ROUTER_OPTIONS_H_

#include <map>
#include <string>

#include "kubernetes/cluster_model.h"
#include "kubernetes/pod_ledger.h"
#include "kubernetes/serving_spec.h"
#include "queueing/router_kind.h"

namespace migserve::kubernetes {

struct RouterOptions {
  std::string namespace_ = "default";  // of the routes and group Services
  ServingSpec serving;                 // names the gateway
  // service -> DNN model, for the path match; a service not listed serves
  // the model of its name.
  std::map<std::string, std::string> models;
  // The data plane beside the gateway's HTTPRoutes: the target's router
  // kind's.
  queueing::DataPlane plane = queueing::DataPlane::kGatewayOnly;
  // The controller's pod ledger (not owned; outlives the router): the
  // proxy's routes name each member's pod by the uid it records, so that
  // the proxy takes no pod but the controller's. Null: no uids.
  PodLedger* ledger = nullptr;
  // The fencing token of the controller's writes: the Lease's
  // leaseTransitions when it took it (kAnnotationEpoch); 0 without leader
  // election.
  long epoch = 0;
  double proxy_timeout_s = 60;  // the longest to wait for the proxies
  double proxy_poll_s = 0.1;    // how often to look at them meanwhile

  // The DNN model `service` serves.
  const std::string& ModelOf(const std::string& service) const {
    auto model = models.find(service);
    return model != models.end() ? model->second : service;
  }
};

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_ROUTING_ROUTER_OPTIONS_H_
