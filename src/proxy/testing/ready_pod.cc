#include "proxy/testing/ready_pod.h"

#include <fmt/format.h>

#include "kubernetes/names.h"

namespace migserve::proxy {

nlohmann::json ReadyReplicaPod(const std::string& service,
                               const cluster::ReplicaSite& site, int port,
                               bool ready, int grpc_port) {
  namespace k8s = kubernetes;
  nlohmann::json ports = nlohmann::json::array(
      {nlohmann::json{{"name", "http"}, {"containerPort", port}}});
  if (grpc_port > 0) {
    ports.push_back(
        nlohmann::json{{"name", "grpc"}, {"containerPort", grpc_port}});
  }
  return {{"metadata",
           {{"name", fmt::format("{}-{}-{}-{}", service, site.gpu.node,
                                 site.gpu.index, site.start)},
            {"namespace", "default"},
            {"labels",
             {{k8s::kManagedBy, k8s::kManager},
              {k8s::kLabelService, service},
              {k8s::kLabelNode, site.gpu.node},
              {k8s::kLabelGpu, std::to_string(site.gpu.index)},
              {k8s::kLabelStart, std::to_string(site.start)}}}}},
          {"spec", {{"containers", {{{"name", "server"}, {"ports", ports}}}}}},
          {"status",
           {{"podIP", "127.0.0.1"},
            {"conditions",
             {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
}

}  // namespace migserve::proxy
