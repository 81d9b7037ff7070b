// Putting a deployment on a fleet's real GPUs (`migserve place`): each GPU
// config goes to an inventory GPU of its own model.
#ifndef MIGSERVE_CLUSTER_PLACEMENT_H_
#define MIGSERVE_CLUSTER_PLACEMENT_H_

#include "cluster/cluster_state.h"
#include "cluster/inventory.h"
#include "deployment/deployment.h"
#include "util/status_or.h"

namespace migserve::cluster {

// Returns the cluster of `inventory` holding `deployment`. A GPU of the
// deployment that names a node and index stays there (it must be an
// inventory GPU of the same model); one that names only a node gets that
// node's first free GPU; any other GPU that has instances gets the first free
// GPU of its model, nodes in inventory order (so configs fill few nodes).
// GPUs without instances take no GPU. Every other inventory GPU is idle.
// Returns InvalidArgument naming the GPU entry for a GPU outside the
// inventory or of another model, and naming the model when the fleet has
// too few GPUs of it.
StatusOr<ClusterState> PlaceOnInventory(
    const deployment::Deployment& deployment, const Inventory& inventory);

// Returns `deployment` placed on `inventory` (PlaceOnInventory): every
// inventory GPU listed, idle ones too, with the deployment's GPU model and
// summary.
StatusOr<deployment::Deployment> PlacedDeployment(
    const deployment::Deployment& deployment, const Inventory& inventory);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_PLACEMENT_H_
