#include "kubernetes/partition/gpu_operator_check.h"

#include <fmt/format.h>

#include "kubernetes/cluster_model.h"
#include "kubernetes/export.h"

namespace migserve::kubernetes {
namespace {

using json = nlohmann::json;

constexpr char kMigConfig[] = "nvidia.com/mig.config";
constexpr char kMigConfigState[] = "nvidia.com/mig.config.state";
constexpr char kMigStrategy[] = "nvidia.com/mig.strategy";
constexpr char kMigCapable[] = "nvidia.com/mig.capable";

// The ClusterPolicy's MIG strategy and MIG manager.
void CheckPolicy(kube::KubeClient* client, std::vector<Finding>* out) {
  auto policies = client->List("/apis/nvidia.com/v1/clusterpolicies", "");
  if (!policies.ok()) {
    out->push_back({true, fmt::format("no ClusterPolicy could be read ({}): "
                                      "is the GPU Operator installed?",
                                      policies.status().message())});
    return;
  }
  if (policies->value("items", json::array()).empty()) {
    out->push_back({true, "no ClusterPolicy: is the GPU Operator installed?"});
  }
  for (const json& p : policies->value("items", json::array())) {
    std::string name = p["metadata"].value("name", "?");
    const json spec = p.value("spec", json::object());
    std::string strategy =
        spec.value("mig", json::object()).value("strategy", "single");
    if (strategy != "mixed") {
      out->push_back(
          {true, fmt::format("ClusterPolicy {}: spec.mig.strategy is {}, but "
                             "replicas request nvidia.com/mig-<profile>, "
                             "which only the mixed strategy advertises (set "
                             "spec.mig.strategy: mixed)",
                             name, strategy)});
    } else {
      out->push_back({false, fmt::format("ClusterPolicy {}: MIG strategy "
                                         "mixed",
                                         name)});
    }
    const json manager = spec.value("migManager", json::object());
    if (!manager.value("enabled", true)) {
      out->push_back({true, fmt::format("ClusterPolicy {}: the MIG manager is "
                                        "disabled (spec.migManager.enabled)",
                                        name)});
    }
    std::string config =
        manager.value("config", json::object()).value("name", std::string());
    if (config != kMigManagerConfigMap) {
      out->push_back(
          {true, fmt::format("ClusterPolicy {}: spec.migManager.config.name "
                             "is '{}', not {} (the ConfigMap export writes)",
                             name, config, kMigManagerConfigMap)});
    }
  }
  auto managers =
      client->List(fmt::format("/apis/apps/v1/namespaces/{}/daemonsets",
                               kGpuOperatorNamespace),
                   "labelSelector=app%3Dnvidia-mig-manager");
  if (!managers.ok() || managers->value("items", json::array()).empty()) {
    out->push_back({true, fmt::format("no MIG manager DaemonSet "
                                      "(app=nvidia-mig-manager) in {}",
                                      kGpuOperatorNamespace)});
  }
}

void CheckNode(const json& node,
               const std::map<std::string, std::string>& configs,
               std::vector<Finding>* out) {
  std::string name = node["metadata"].value("name", "?");
  std::string config = Label(node, kMigConfig);
  std::string strategy = Label(node, kMigStrategy);
  if (strategy == "single") {
    out->push_back({true, fmt::format("node {}: {}=single: its MIG devices "
                                      "are advertised as nvidia.com/gpu",
                                      name, kMigStrategy)});
  }
  auto want = configs.find(name);
  if (config.empty()) {
    out->push_back(
        {true, fmt::format("node {}: no {} label, so the MIG manager "
                           "applies nothing (kubectl label node {} {}={})",
                           name, kMigConfig, name, kMigConfig,
                           want == configs.end() ? "<config>" : want->second)});
  } else if (want != configs.end() && config != want->second) {
    out->push_back(
        {true, fmt::format("node {}: {}={}, but export wrote {} for it "
                           "(kubectl label node {} {}={} --overwrite)",
                           name, kMigConfig, config, want->second, name,
                           kMigConfig, want->second)});
  } else if (Label(node, kMigConfigState) == "failed") {
    out->push_back({true, fmt::format("node {}: the MIG manager failed to "
                                      "apply {} ({}=failed)",
                                      name, config, kMigConfigState)});
  } else {
    out->push_back(
        {false, fmt::format("node {}: {}={}", name, kMigConfig, config)});
  }
}

}  // namespace

StatusOr<std::vector<Finding>> CheckGpuOperator(
    kube::KubeClient* client,
    const std::map<std::string, std::string>& configs) {
  MIGSERVE_ASSIGN_OR_RETURN(
      json nodes,
      client->List("/api/v1/nodes",
                   fmt::format("labelSelector={}%3Dtrue", kMigCapable)));
  std::vector<Finding> out;
  CheckPolicy(client, &out);
  const json& items = nodes.value("items", json::array());
  if (items.empty()) {
    out.push_back(
        {true, fmt::format("no node is labelled {}=true", kMigCapable)});
  }
  for (const json& node : items) CheckNode(node, configs, &out);
  for (const auto& [node, config] : configs) {
    bool seen = false;
    for (const json& n : items) seen = seen || n["metadata"]["name"] == node;
    if (!seen) {
      out.push_back({true, fmt::format("node {} of the deployment is not a "
                                       "MIG-capable node of the cluster",
                                       node)});
    }
  }
  return out;
}

}  // namespace migserve::kubernetes
