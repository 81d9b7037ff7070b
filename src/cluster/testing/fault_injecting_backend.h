// A backend that fails chosen calls of the backend it wraps, for tests of
// what the controller does when the cluster answers badly: the N-th Start
// is refused, the N-th action to end ends failed, the N-th Observe fails
// (1-based; 0: never).
#ifndef MIGSERVE_CLUSTER_TESTING_FAULT_INJECTING_BACKEND_H_
#define MIGSERVE_CLUSTER_TESTING_FAULT_INJECTING_BACKEND_H_

#include "cluster/backend_wrapper.h"

namespace migserve::cluster {

struct InjectedFaults {
  int refuse_start = 0;
  int fail_result = 0;
  int fail_observe = 0;
};

class FaultInjectingBackend : public BackendWrapper {
 public:
  FaultInjectingBackend(ClusterBackend* target, InjectedFaults faults)
      : BackendWrapper(target), faults_(faults) {}

  StatusOr<ClusterState> Observe() override;
  // None while an Observe is to fail, so that the caller observes.
  std::optional<LiveView> Live() override;
  Status Start(const Action& action) override;
  StatusOr<ActionResult> WaitAny() override;

  // Calls seen so far.
  int starts() const { return starts_; }
  int results() const { return results_; }
  int observes() const { return observes_; }

 private:
  InjectedFaults faults_;
  int starts_ = 0;
  int results_ = 0;
  int observes_ = 0;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_TESTING_FAULT_INJECTING_BACKEND_H_
