// gRPC model servers and a gRPC client for the proxy tests: Debian's grpcio
// (python3-grpcio, tools/install-deps.sh) run through grpc_replica.py here.
// Each server answers every call with its name and the migserve-service
// header it received, so a test sees where the proxy sent a call.
#ifndef MIGSERVE_PROXY_TESTING_GRPC_REPLICAS_H_
#define MIGSERVE_PROXY_TESTING_GRPC_REPLICAS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace migserve::proxy {

class GrpcReplicas {
 public:
  // One server per name on 127.0.0.1; returns once all listen. port() is 0
  // for every name if they could not start.
  explicit GrpcReplicas(const std::vector<std::string>& names);
  ~GrpcReplicas();
  GrpcReplicas(const GrpcReplicas&) = delete;
  GrpcReplicas& operator=(const GrpcReplicas&) = delete;

  int port(const std::string& name) const;

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;  // closing it stops the servers
  std::map<std::string, int> ports_;
};

// One unary call through 127.0.0.1:`port` with the header migserve-service
// set to `service` ("": none). Returns "OK <server> <header>" or the gRPC
// status and details ("NOT_FOUND no such service ...").
std::string GrpcCall(int port, const std::string& service);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_GRPC_REPLICAS_H_
