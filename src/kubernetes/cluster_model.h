// The cluster model (cluster/) that the Kubernetes room implements, by the
// names its code uses: a backend, an exporter and routers of clusters, all
// in namespace migserve::kubernetes above it.
#ifndef MIGSERVE_KUBERNETES_CLUSTER_MODEL_H_
#define MIGSERVE_KUBERNETES_CLUSTER_MODEL_H_

#include "cluster/action.h"
#include "cluster/capacity_books.h"
#include "cluster/cluster_backend.h"
#include "cluster/cluster_state.h"
#include "cluster/gpu_id.h"
#include "cluster/router.h"
#include "cluster/routing.h"

namespace migserve::kubernetes {

using cluster::Action;
using cluster::ActionKind;
using cluster::ActionResult;
using cluster::CapacityBooks;
using cluster::ClusterBackend;
using cluster::ClusterFromDeployment;
using cluster::ClusterState;
using cluster::GpuId;
using cluster::GpuState;
using cluster::InstanceRef;
using cluster::LiveView;
using cluster::RemovalGuard;
using cluster::Replica;
using cluster::ReplicaSite;
using cluster::RouteGroup;
using cluster::Router;
using cluster::ServiceRoute;
using cluster::Slot;
using cluster::TransitionPlan;

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_CLUSTER_MODEL_H_
