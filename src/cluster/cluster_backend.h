// The seam between the controller and a cluster (DESIGN 6, leveldb's Env):
// the simulated cluster is the embedded default, Kubernetes the real one.
#ifndef MIGSERVE_CLUSTER_CLUSTER_BACKEND_H_
#define MIGSERVE_CLUSTER_CLUSTER_BACKEND_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/action.h"
#include "cluster/cluster_state.h"
#include "util/status_or.h"

namespace migserve::cluster {

struct ActionResult {
  int id = 0;
  Status status;  // why the action failed, if it did
};

// The cluster as a backend keeps it in memory, read without a copy: the
// pointers are the backend's own books, valid while it lives, showing the
// cluster as it was at the last Live(), Start or WaitAny.
struct LiveView {
  const ClusterState* state = nullptr;
  const std::map<std::string, double>* capacity = nullptr;  // state's
  // Changes whenever GPUs leave or join the cluster.
  int gpus_version = 0;
};

// What a backend asks just before each write that takes a replica away
// (a delete; a migrate's source), at an action's start or in its middle:
// the action, the cluster as the backend sees it at that moment (brought up
// to date first) with its ready capacity per service, and the running
// actions whose removals were written but are not yet seen to have taken
// effect. OK lets the write go. An error stops it: at a start, Start
// returns the error and the action never runs; in the middle (a migrate
// whose destination is ready), the action ends failed with it and the
// replica stays where it was (docs/controller.md, "Under faults").
using RemovalGuard =
    std::function<Status(const Action& action, const ClusterState& seen,
                         const std::map<std::string, double>& capacity,
                         const std::vector<const Action*>& removing)>;

class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;

  // Returns the cluster as it is now.
  virtual StatusOr<ClusterState> Observe() = 0;

  // Returns the cluster as it is now, as Observe would, with its ready
  // capacity per service, where the backend keeps both up to date in
  // memory (the simulated cluster; Kubernetes' books, brought up to date
  // by this call); nullopt where it does not, or cannot now (then
  // Observe). What the controller reads after every action event, so that
  // event costs no copy of the cluster.
  virtual std::optional<LiveView> Live() { return std::nullopt; }

  // Starts `action` and returns without waiting for it. Returns an error if
  // it cannot start (the action then never runs).
  virtual Status Start(const Action& action) = 0;

  // Returns the ids of started actions not yet reported by WaitAny, also
  // those a previous controller process started.
  virtual std::vector<int> Running() const = 0;

  // Blocks until one running action ends and returns how. Returns
  // FailedPrecondition if nothing runs.
  virtual StatusOr<ActionResult> WaitAny() = 0;

  // Asks `guard` before every write that takes a replica away from now on
  // (empty: every such write goes).
  virtual void SetRemovalGuard(RemovalGuard guard) = 0;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_CLUSTER_BACKEND_H_
