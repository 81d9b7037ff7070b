#include "cluster/testing/fault_injecting_backend.h"

#include <fmt/format.h>

namespace migserve::cluster {

StatusOr<ClusterState> FaultInjectingBackend::Observe() {
  if (++observes_ == faults_.fail_observe) {
    return Status::Unavailable("injected: observe fails");
  }
  return BackendWrapper::Observe();
}

std::optional<LiveView> FaultInjectingBackend::Live() {
  if (observes_ < faults_.fail_observe) return std::nullopt;
  return BackendWrapper::Live();
}

Status FaultInjectingBackend::Start(const Action& action) {
  if (++starts_ == faults_.refuse_start) {
    return Status::Unavailable(
        fmt::format("injected: start of action {} refused", action.id));
  }
  return BackendWrapper::Start(action);
}

StatusOr<ActionResult> FaultInjectingBackend::WaitAny() {
  MIGSERVE_ASSIGN_OR_RETURN(ActionResult result, BackendWrapper::WaitAny());
  if (++results_ == faults_.fail_result && result.status.ok()) {
    result.status = Status::Unavailable(
        fmt::format("injected: action {} failed", result.id));
  }
  return result;
}

}  // namespace migserve::cluster
