#include "kubernetes/partition/partitioner.h"

#include <fmt/format.h>

#include <algorithm>

#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/agent_driver.h"
#include "kubernetes/partition/dra_driver.h"

namespace migserve::kubernetes {

const std::vector<PartitionerFacets>& Partitioners() {
  static const std::vector<PartitionerFacets> kAll = {
      {Partitioner::kAgent, "agent", "device-plugin", true,
       "migserve's node agent (NVML), NVIDIA's device plugin exposing the "
       "instances"},
      {Partitioner::kGpuOperator, "gpu-operator", "gpu-operator", false,
       "the GPU Operator's MIG manager (mig-parted), whole GPUs from a "
       "ConfigMap"},
      {Partitioner::kDra, "dra", "dra", true,
       "NVIDIA's DRA driver (DynamicMIG) through ResourceClaims"}};
  return kAll;
}

const PartitionerFacets& FacetsOf(Partitioner partitioner) {
  for (const PartitionerFacets& f : Partitioners()) {
    if (f.kind == partitioner) return f;
  }
  return Partitioners().front();  // unreachable: every kind has a row
}

std::vector<std::pair<std::string, Partitioner>> PartitionerNames(
    bool driving) {
  std::vector<std::pair<std::string, Partitioner>> names;
  for (const PartitionerFacets& f : Partitioners()) {
    if (!driving || f.drives) names.emplace_back(f.name, f.kind);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::pair<std::string, Partitioner>> FlavorNames() {
  std::vector<std::pair<std::string, Partitioner>> names;
  for (const PartitionerFacets& f : Partitioners()) {
    names.emplace_back(f.flavor, f.kind);
  }
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::unique_ptr<PartitionDriver>> MakePartitionDriver(
    Partitioner partitioner, kube::KubeClient* client,
    const DriverOptions& options) {
  switch (partitioner) {
    case Partitioner::kAgent:
      return std::unique_ptr<PartitionDriver>(
          std::make_unique<AgentDriver>(client));
    case Partitioner::kDra: {
      DraDriverOptions dra;
      dra.namespace_ = options.namespace_;
      dra.watch_s = options.watch_s;
      dra.progress = options.progress;
      dra.event = options.event;
      return std::unique_ptr<PartitionDriver>(
          std::make_unique<DraDriver>(client, std::move(dra)));
    }
    case Partitioner::kGpuOperator:
      break;
  }
  return Status::FailedPrecondition(fmt::format(
      "--partitioner {}: {}; the controller cannot act through it (it "
      "changes whole GPUs, drained): use agent or dra (docs/kubernetes.md, "
      "\"Choosing who partitions the GPUs\")",
      FacetsOf(partitioner).name, FacetsOf(partitioner).what));
}

}  // namespace migserve::kubernetes
