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

// Physical GPU id -> the slots (instances and replicas) it must hold.
using DesiredLayouts = std::map<int, std::vector<cluster::Slot>>;

// Returns where each target GPU that serves a replica goes. A target whose
// GPUs all name a node and an id of the cluster on that node keeps its
// placement; otherwise each target GPU goes to the physical GPU that already
// holds most of it (same instance and service, then same instance), then to
// idle GPUs. Returns InvalidArgument for an unknown profile or an illegal
// target layout, FailedPrecondition if the cluster has too few GPUs.
StatusOr<DesiredLayouts> MapTarget(const mig::GpuModel& gpu,
                                   const cluster::ClusterState& current,
                                   const deployment::Deployment& target);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_TARGET_MAPPING_H_
