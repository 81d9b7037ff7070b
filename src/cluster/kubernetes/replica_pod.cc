#include "cluster/kubernetes/replica_pod.h"

#include <fmt/format.h>

#include "cluster/kubernetes/names.h"

namespace migserve::cluster::kubernetes {

Json ServerContainer(const Replica& replica, const std::string& model,
                     const ServingOptions& options) {
  Json env = Json::array();
  for (auto [name, value] :
       {std::pair<const char*, std::string>{"MIGSERVE_SERVICE",
                                            replica.service},
        {"MIGSERVE_MODEL", model},
        {"MIGSERVE_BATCH", std::to_string(replica.batch)},
        {"MIGSERVE_PROCS", std::to_string(replica.procs)}}) {
    env.push_back({{"name", name}, {"value", value}});
  }
  return {{"name", "server"},
          {"image", options.image},
          {"env", env},
          {"ports",
           Json::array({{{"name", "http"}, {"containerPort", options.port}}})},
          {"readinessProbe",
           {{"httpGet", {{"path", "/v2/health/ready"}, {"port", "http"}}}}}};
}

Json ReplicaLabels(const std::string& service, const std::string& node,
                   int index, const mig::Profile& profile, int start) {
  return {{kManagedBy, kManager},
          {kLabelService, service},
          {kLabelNode, node},
          {kLabelGpu, std::to_string(index)},
          {kLabelProfile, profile.name},
          {kLabelStart, std::to_string(start)}};
}

Json ReplicaAnnotations(const Replica& r) {
  return {{kAnnotationBatch, std::to_string(r.batch)},
          {kAnnotationProcs, std::to_string(r.procs)},
          {kAnnotationThroughput, fmt::format("{}", r.throughput)},
          {kAnnotationLatency, fmt::format("{}", r.latency_ms)}};
}

std::optional<Replica> ReplicaFromMetadata(const nlohmann::json& metadata) {
  try {
    const nlohmann::json& labels = metadata.at("labels");
    const nlohmann::json& notes = metadata.at("annotations");
    Replica r;
    r.service = labels.at(kLabelService).get<std::string>();
    r.batch = std::stoi(notes.at(kAnnotationBatch).get<std::string>());
    r.procs = std::stoi(notes.at(kAnnotationProcs).get<std::string>());
    r.throughput =
        std::stod(notes.at(kAnnotationThroughput).get<std::string>());
    r.latency_ms = std::stod(notes.at(kAnnotationLatency).get<std::string>());
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Json PodSpec(const std::string& node, Json container, const Json& extra) {
  Json spec = {{"nodeSelector", {{"kubernetes.io/hostname", node}}}};
  for (const auto& [key, value] : extra.items()) spec[key] = value;
  spec["containers"] = Json::array({std::move(container)});
  return spec;
}

Json DevicePluginResources(const mig::Profile& profile) {
  return {{"limits", {{"nvidia.com/mig-" + profile.name, 1}}}};
}

}  // namespace migserve::cluster::kubernetes
