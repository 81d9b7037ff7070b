// Where each replica answers, for `migserve router --render` (docs/serving.md,
// "Reviewing a configuration"): a CSV with the header
// service,node,gpu,start,address,port and, optionally, grpc_port; one row
// per replica at its site (the node, GPU index and start its deployment
// gives it), so that the proxy's configuration for a deployment can be
// written and read with no Kubernetes API.
#ifndef MIGSERVE_PROXY_REPLICA_ADDRESSES_H_
#define MIGSERVE_PROXY_REPLICA_ADDRESSES_H_

#include <string>

#include "proxy/control_plane.h"
#include "util/status_or.h"

namespace migserve::proxy {

// Parses the CSV `text`; errors name `source`, the line and the column (a
// name that is not plain, an address nginx would not take unquoted, a port
// out of range, a site listed twice).
StatusOr<ReplicaBackends> ParseReplicaAddresses(const std::string& text,
                                                const std::string& source);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_REPLICA_ADDRESSES_H_
