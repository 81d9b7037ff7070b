// A ClusterBackend that forwards every call to another (leveldb's
// EnvWrapper): a backend that changes one call derives from it and
// overrides that call only.
#ifndef MIGSERVE_CLUSTER_BACKEND_WRAPPER_H_
#define MIGSERVE_CLUSTER_BACKEND_WRAPPER_H_

#include <utility>
#include <vector>

#include "cluster/cluster_backend.h"

namespace migserve::cluster {

class BackendWrapper : public ClusterBackend {
 public:
  // `target` is not owned and outlives the wrapper.
  explicit BackendWrapper(ClusterBackend* target) : target_(target) {}

  ClusterBackend* target() const { return target_; }

  StatusOr<ClusterState> Observe() override { return target_->Observe(); }
  std::optional<LiveView> Live() override { return target_->Live(); }
  Status Start(const Action& action) override { return target_->Start(action); }
  std::vector<int> Running() const override { return target_->Running(); }
  StatusOr<ActionResult> WaitAny() override { return target_->WaitAny(); }
  void SetRemovalGuard(RemovalGuard guard) override {
    target_->SetRemovalGuard(std::move(guard));
  }

 private:
  ClusterBackend* target_;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_BACKEND_WRAPPER_H_
