// Kubernetes MicroTime: what Lease renewals and Event timestamps carry.
#ifndef MIGSERVE_KUBE_MICRO_TIME_H_
#define MIGSERVE_KUBE_MICRO_TIME_H_

#include <string>

namespace migserve::kube {

// Now as a Kubernetes MicroTime: 2026-11-23T14:41:29.123456Z (RFC 3339, so
// fields of type Time accept it too).
std::string MicroTimeNow();
// Now as a Kubernetes Time: 2026-11-23T14:41:29Z (what creationTimestamp
// and a condition's lastTransitionTime carry).
std::string TimeNow();

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_MICRO_TIME_H_
