#include "cluster/kubernetes/replica_pod.h"

#include <fmt/format.h>

#include <cmath>

#include "cluster/kubernetes/json_read.h"
#include "cluster/kubernetes/names.h"
#include "util/csv.h"

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
  Json notes = {{kAnnotationBatch, std::to_string(r.batch)},
                {kAnnotationProcs, std::to_string(r.procs)},
                {kAnnotationThroughput, fmt::format("{}", r.throughput)},
                {kAnnotationLatency, fmt::format("{}", r.latency_ms)}};
  if (!r.model.empty()) notes[kAnnotationModel] = r.model;
  return notes;
}

std::optional<Replica> ReplicaFromMetadata(const nlohmann::json& metadata) {
  std::optional<std::string> service =
      StringField(metadata, "labels", kLabelService);
  std::optional<int> batch =
      IntField(metadata, "annotations", kAnnotationBatch);
  std::optional<int> procs =
      IntField(metadata, "annotations", kAnnotationProcs);
  std::optional<std::string> throughput =
      StringField(metadata, "annotations", kAnnotationThroughput);
  std::optional<std::string> latency =
      StringField(metadata, "annotations", kAnnotationLatency);
  if (!service || service->empty() || !batch || *batch < 0 || !procs ||
      *procs < 1 || !throughput || !latency) {
    return std::nullopt;
  }
  Replica r;
  r.service = *service;
  r.batch = *batch;
  r.procs = *procs;
  if (!ParseDouble(*throughput, &r.throughput) ||
      !std::isfinite(r.throughput) || r.throughput < 0 ||
      !ParseDouble(*latency, &r.latency_ms) || !std::isfinite(r.latency_ms)) {
    return std::nullopt;
  }
  r.model = StringField(metadata, "annotations", kAnnotationModel).value_or("");
  return r;
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
