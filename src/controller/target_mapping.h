// Puts a target deployment's GPU configs on the cluster's physical GPUs so
// that as much as possible stays in place (paper 6: fewer actions).
#ifndef MIGSERVE_CONTROLLER_TARGET_MAPPING_H_
#define MIGSERVE_CONTROLLER_TARGET_MAPPING_H_

#include <map>
#include <vector>

#include "cluster/cluster_state.h"
#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::controller {

// Physical GPU -> the slots (instances and replicas) it must hold.
using DesiredLayouts = std::map<cluster::GpuId, std::vector<cluster::Slot>>;

// Returns where each target GPU that serves a replica goes; a target GPU
// only ever goes to a physical GPU of its own model. A target whose GPUs all
// name a node, and whose serving GPUs are GPUs of the cluster of the same
// model, keeps its placement; otherwise each target GPU goes to the
// physical GPU of its model that already holds most of it (same instance
// and service, then same instance), then to idle GPUs. A GPU held by
// someone else (GpuState::held_by) gets no target GPU: what serves there
// goes elsewhere. Returns
// InvalidArgument for an unknown model or profile or an illegal target
// layout, FailedPrecondition naming the model if the cluster has too few
// GPUs of it that nobody else holds.
StatusOr<DesiredLayouts> MapTarget(const cluster::ClusterState& current,
                                   const deployment::Deployment& target);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_TARGET_MAPPING_H_
