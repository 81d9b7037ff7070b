// The node agent's protocol, the first partition driver's (agent_driver.h):
// how the controller and the node agents talk through Node annotations
// (nos's pattern, notes/kubernetes.md 4.1), one key per GPU so parallel
// repartitions of one node never overwrite each other:
//   migserve.io/mig-layouts          agent: the node's GPU model and layouts
//   migserve.io/mig-request-<index>  controller: a partial reconfiguration
//   migserve.io/mig-status-<index>   agent: how the last request ended
// A request carries a nonce; the agent answers with the same nonce. A
// request of a leader carries its Lease's epoch (leaseTransitions, the
// fencing token of docs/controller.md): an agent refuses one older than
// the newest it has applied or sees on its node, a replaced leader's.
#ifndef MIGSERVE_KUBERNETES_PARTITION_MIG_ANNOTATIONS_H_
#define MIGSERVE_KUBERNETES_PARTITION_MIG_ANNOTATIONS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kubernetes/cluster_model.h"
#include "kubernetes/partition/partition_driver.h"
#include "mig/gpu_model.h"
#include "mig/reconfiguration.h"
#include "util/status_or.h"

namespace migserve::kubernetes {

// Node annotation the agent writes: the node's GPUs and their layouts.
inline constexpr char kAnnotationLayouts[] = "migserve.io/mig-layouts";

struct NodeLayouts {
  std::vector<GpuLayout> gpus;  // by device index
};

struct MigRequest {
  std::string nonce;
  mig::Reconfiguration change;
  long epoch = 0;  // the writer's Lease epoch; 0: none (no leader election)
};

struct MigStatus {
  std::string nonce;
  bool ok = false;
  std::string error;
  long epoch = 0;  // the newest epoch the agent has carried out (a record)
};

// The per-GPU keys: kAnnotationMigRequest and kAnnotationMigStatus with
// the GPU's index (kube::IndexedKey).
inline constexpr char kAnnotationMigRequest[] = "migserve.io/mig-request";
inline constexpr char kAnnotationMigStatus[] = "migserve.io/mig-status";
std::string RequestKey(int index);
std::string StatusKey(int index);

// {"gpus": [{"index": 0, "gpu": "H100-SXM5-80GB", "instances": [...]}]},
// plus the top-level "gpu" of GPU 0 that agents before mixed nodes wrote.
std::string FormatLayouts(const NodeLayouts& layouts);
std::string FormatRequest(const MigRequest& request, const mig::GpuModel& gpu);
std::string FormatStatus(const MigStatus& status);

// Parsers; InvalidArgument names `where` and the field. Any text is safe to
// pass: malformed JSON or values of the wrong type are errors, never
// exceptions. ParseLayouts resolves each GPU's model ("gpu" of the entry,
// else of the node) in the default catalog.
StatusOr<NodeLayouts> ParseLayouts(const std::string& text,
                                   const std::string& where);
StatusOr<MigRequest> ParseRequest(const std::string& text,
                                  const mig::GpuModel& gpu,
                                  const std::string& where);
StatusOr<MigStatus> ParseStatus(const std::string& text,
                                const std::string& where);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_PARTITION_MIG_ANNOTATIONS_H_
