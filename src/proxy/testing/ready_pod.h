// A replica pod as the API server would hold it once it runs: migserve's
// labels for `service` at `site`, a container port named http (and one
// named grpc when `grpc_port` is not 0), Ready, at 127.0.0.1 (where the
// tests' emulated replicas listen).
#ifndef MIGSERVE_PROXY_TESTING_READY_POD_H_
#define MIGSERVE_PROXY_TESTING_READY_POD_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cluster/routing.h"

namespace migserve::proxy {

nlohmann::json ReadyReplicaPod(const std::string& service,
                               const cluster::ReplicaSite& site, int port,
                               bool ready = true, int grpc_port = 0);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_READY_POD_H_
