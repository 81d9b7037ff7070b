#include "kubernetes/replica_pod.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "boundary/csv.h"
#include "boundary/json_fields.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "llm/llm_model.h"
#include "llm/request_lengths.h"

namespace migserve::kubernetes {
namespace {

std::string GroupNameOf(const Replica& replica, const InstanceRef& at) {
  return GroupName(replica.service, GroupOf(replica, *at.model, at.instance));
}

// A language model's engine settings for its slice (docs/llm.md,
// "Serving"): the longest sequence it takes (llm::MaxModelLen of the
// service's terms: the credit path refused every slice whose KV room
// cannot hold it) and the KV cache's dtype, of `model`, the entry its
// credits were searched with. None without one or without token terms.
std::vector<std::pair<const char*, std::string>> LlmEngineVars(
    const llm::LlmModel* model, const llm::LlmTerms* terms) {
  if (model == nullptr || terms == nullptr) return {};
  return {{"MIGSERVE_MAX_MODEL_LEN",
           std::to_string(llm::MaxModelLen(*terms, *model))},
          {"MIGSERVE_KV_CACHE_DTYPE",
           model->kv_dtype.empty() ? "auto" : model->kv_dtype}};
}

// A routing group's name (GroupName) as a label value.
StatusOr<kube::LabelValue> GroupLabel(const std::string& group) {
  return kube::ParseLabelValue(group, "routing group");
}

}  // namespace

Json ReplicaContract(const Replica& replica, const std::string& model,
                     const ReplicaPlace& place, const ServingSpec& spec) {
  const InstanceRef& at = place.at;
  std::vector<std::pair<const char*, std::string>> vars = {
      {"MIGSERVE_SERVICE", replica.service},
      {"MIGSERVE_MODEL", model},
      {"MIGSERVE_BATCH", std::to_string(replica.batch)},
      {"MIGSERVE_PROCS", std::to_string(replica.procs)},
      {"MIGSERVE_PROFILE", at.model->profiles[at.instance.profile].name},
      {"MIGSERVE_GPU_MODEL", at.model->name},
      {"MIGSERVE_NODE", at.gpu.node}};
  if (place.exact) {
    vars.push_back({"MIGSERVE_GPU", std::to_string(at.gpu.index)});
    vars.push_back({"MIGSERVE_START", std::to_string(at.instance.start)});
  }
  vars.push_back({"MIGSERVE_THROUGHPUT", fmt::format("{}", replica.credit)});
  vars.push_back(
      {"MIGSERVE_LATENCY_MS", fmt::format("{}", replica.latency_ms)});
  vars.push_back({"MIGSERVE_GROUP", GroupNameOf(replica, at)});
  vars.push_back(
      {"MIGSERVE_PORT", std::to_string(spec.RoutePort(replica.service))});
  // The names an OpenAI replica answers to, for a shell (the template's
  // kServedNamesWord is replaced by them one word each).
  if (std::vector<std::string> names = spec.ServedNames(replica.service, model);
      !names.empty()) {
    vars.push_back({"MIGSERVE_SERVED_MODEL_NAMES",
                    fmt::format("{}", fmt::join(names, " "))});
  }
  // The vLLM template's engine settings.
  if (spec.EngineOf(replica.service) == workload::Engine::kVllm) {
    auto terms = spec.tokens.find(replica.service);
    for (auto& var :
         LlmEngineVars(spec.LlmModelOf(replica.service),
                       terms != spec.tokens.end() ? &terms->second : nullptr)) {
      vars.push_back(var);
    }
  }
  Json env = Json::array();
  for (const auto& [name, value] : vars) {
    env.push_back({{"name", name}, {"value", value}});
  }
  return env;
}

Json RestrictedContainerSecurity() {
  return {{"allowPrivilegeEscalation", false},
          {"capabilities", {{"drop", {"ALL"}}}}};
}

Json ServerContainer(const Replica& replica, const std::string& model,
                     const ReplicaPlace& place, const ServingSpec& spec,
                     const Json& device) {
  Json pod = spec.TemplateFor(replica.service);
  Json container = {{"name", "server"}, {"image", pod["image"]}};
  if (pod.contains("imagePullPolicy")) {
    container["imagePullPolicy"] = pod["imagePullPolicy"];
  }
  const std::vector<std::string> names =
      spec.ServedNames(replica.service, model);
  for (const char* key : {"command", "args"}) {
    if (!pod.contains(key)) continue;
    Json words = Json::array();
    for (const Json& word : pod[key]) {
      if (word == kServedNamesWord && !names.empty()) {
        for (const std::string& name : names) words.push_back(name);
      } else {
        words.push_back(word);
      }
    }
    container[key] = std::move(words);
  }
  Json env = ReplicaContract(replica, model, place, spec);
  for (const Json& var : pod.value("env", Json::array())) env.push_back(var);
  container["env"] = std::move(env);
  for (const char* key : {"ports", "readinessProbe", "livenessProbe",
                          "startupProbe", "volumeMounts"}) {
    if (pod.contains(key)) container[key] = pod[key];
  }
  Json resources = pod.value("resources", Json::object());
  for (const auto& [key, value] : device.items()) {
    if (value.is_object()) {
      for (const auto& [name, amount] : value.items()) {
        resources[key][name] = amount;
      }
    } else {
      resources[key] = value;
    }
  }
  container["resources"] = std::move(resources);
  container["securityContext"] = RestrictedContainerSecurity();
  return container;
}

StatusOr<kube::Labels> ServiceLabels(const std::string& service) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue name,
                            kube::ParseLabelValue(service, "service"));
  kube::Labels labels = ManagedLabels();
  labels.Set(kLabelService, std::move(name));
  return labels;
}

StatusOr<kube::Labels> SiteLabels(kube::Labels labels, const GpuId& gpu,
                                  const mig::Profile& profile, int start,
                                  bool exact) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue node, NodeLabel(gpu));
  labels.Set(kLabelNode, std::move(node));
  if (exact) {
    MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue index, NumberLabel(gpu.index));
    labels.Set(kLabelGpu, std::move(index));
  }
  MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue name, ProfileLabel(profile));
  labels.Set(kLabelProfile, std::move(name));
  if (exact) {
    MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue at, NumberLabel(start));
    labels.Set(kLabelStart, std::move(at));
  }
  return labels;
}

StatusOr<kube::Labels> ReplicaLabels(const Replica& replica,
                                     const InstanceRef& at, bool exact) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels service,
                            ServiceLabels(replica.service));
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels,
                            SiteLabels(std::move(service), at.gpu,
                                       at.model->profiles[at.instance.profile],
                                       at.instance.start, exact));
  MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue group,
                            GroupLabel(GroupNameOf(replica, at)));
  labels.Set(kLabelGroup, std::move(group));
  return labels;
}

StatusOr<kube::Labels> GroupLabels(const std::string& service,
                                   const std::string& group) {
  MIGSERVE_ASSIGN_OR_RETURN(kube::Labels labels, ServiceLabels(service));
  MIGSERVE_ASSIGN_OR_RETURN(kube::LabelValue value, GroupLabel(group));
  labels.Set(kLabelGroup, std::move(value));
  return labels;
}

kube::Annotations ReplicaAnnotations(const Replica& r,
                                     const std::string& owner) {
  kube::Annotations notes;
  notes.Set(kAnnotationOwner, owner)
      .Set(kAnnotationBatch, std::to_string(r.batch))
      .Set(kAnnotationProcs, std::to_string(r.procs))
      .Set(kAnnotationThroughput, fmt::format("{}", r.credit))
      .Set(kAnnotationLatency, fmt::format("{}", r.latency_ms));
  if (!r.model.empty()) notes.Set(kAnnotationModel, r.model);
  return notes;
}

Json ObjectMetadata(const ObjectName& name, const kube::Labels& labels,
                    const kube::Annotations& annotations,
                    const ServingSpec& spec) {
  Json meta = {{"name", name.str()}};
  if (!spec.namespace_.empty()) meta["namespace"] = spec.namespace_;
  meta["labels"] = labels.ToJson();
  if (!annotations.empty()) meta["annotations"] = annotations.ToJson();
  return meta;
}

Json PodMetadata(const kube::Labels& labels,
                 const kube::Annotations& annotations, const ServingSpec& spec,
                 const std::string& service) {
  Json pod = spec.TemplateFor(service);
  Json all_labels = pod.value("labels", Json::object());
  for (const auto& [key, value] : labels.items()) {
    all_labels[std::string(key)] = value.str();
  }
  Json all_annotations = pod.value("annotations", Json::object());
  Json ours = annotations.ToJson();
  for (const auto& [key, value] : ours.items()) all_annotations[key] = value;
  Json meta = {{"labels", all_labels}};
  if (!all_annotations.empty()) meta["annotations"] = all_annotations;
  return meta;
}

std::optional<ReplicaSite> ReplicaSiteOf(const nlohmann::json& metadata) {
  std::optional<std::string> node = StringField(metadata, "labels", kLabelNode);
  std::optional<int> gpu = IntField(metadata, "labels", kLabelGpu);
  std::optional<int> start = IntField(metadata, "labels", kLabelStart);
  if (!node || !gpu || !start) return std::nullopt;
  return ReplicaSite{{*node, *gpu}, *start};
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
  if (!ParseDouble(*throughput, &r.credit) || !std::isfinite(r.credit) ||
      r.credit < 0 || !ParseDouble(*latency, &r.latency_ms) ||
      !std::isfinite(r.latency_ms)) {
    return std::nullopt;
  }
  r.model = StringField(metadata, "annotations", kAnnotationModel).value_or("");
  return r;
}

Json PodSpec(const std::string& node, Json container, const ServingSpec& spec,
             const std::string& service, const Json& extra) {
  Json pod = spec.TemplateFor(service);
  Json selector = pod.value("nodeSelector", Json::object());
  selector["kubernetes.io/hostname"] = node;
  Json out = {{"nodeSelector", selector}};
  for (const char* key : {"serviceAccountName", "imagePullSecrets",
                          "tolerations", "volumes", "securityContext"}) {
    if (pod.contains(key)) out[key] = pod[key];
  }
  for (const auto& [key, value] : extra.items()) out[key] = value;
  out["containers"] = Json::array({std::move(container)});
  return out;
}

Json DevicePluginResources(const mig::Profile& profile) {
  return {{"limits", {{MigResourceName(profile), 1}}}};
}

}  // namespace migserve::kubernetes
