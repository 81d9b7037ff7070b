// What a replica looks like on Kubernetes, shared by `export` and the
// Kubernetes backend: its serving container, the labels that say where it
// is (service, node, GPU index on the node, profile, start), the
// annotations that say what it serves, and the pod spec that pins it to its
// node and requests its MIG device.
#ifndef MIGSERVE_CLUSTER_KUBERNETES_REPLICA_POD_H_
#define MIGSERVE_CLUSTER_KUBERNETES_REPLICA_POD_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cluster/cluster_state.h"

namespace migserve::cluster::kubernetes {

using Json = nlohmann::ordered_json;

struct ServingOptions {
  // The serving container; it reads the model, batch and process count from
  // MIGSERVE_* environment variables and is ready on HTTP /v2/health/ready.
  std::string image = "nvcr.io/nvidia/tritonserver:24.08-py3";
  int port = 8000;
};

// The serving container of `replica` of `service` (running `model`).
Json ServerContainer(const Replica& replica, const std::string& model,
                     const ServingOptions& options);

// Labels of one replica at `instance` of GPU `index` on `node`.
Json ReplicaLabels(const std::string& service, const std::string& node,
                   int index, const mig::Profile& profile, int start);

// Annotations with the replica's batch, processes, throughput and latency.
Json ReplicaAnnotations(const Replica& replica);

// Reads a replica back from pod or template metadata (labels' service and
// ReplicaAnnotations). Returns nullopt if a field is missing or bad; never
// throws, whatever `metadata` holds.
std::optional<Replica> ReplicaFromMetadata(const nlohmann::json& metadata);

// A pod spec pinned to `node` running `container`, with `extra` fields
// (resourceClaims, say) before the containers.
Json PodSpec(const std::string& node, Json container, const Json& extra = {});

// The limits that request one MIG device of `profile` from NVIDIA's device
// plugin (mixed strategy).
Json DevicePluginResources(const mig::Profile& profile);

}  // namespace migserve::cluster::kubernetes

#endif  // MIGSERVE_CLUSTER_KUBERNETES_REPLICA_POD_H_
