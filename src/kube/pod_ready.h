// Whether a pod serves, or has failed: its Ready condition and its phase,
// read leniently (a pod is an object anyone can write).
#ifndef MIGSERVE_KUBE_POD_READY_H_
#define MIGSERVE_KUBE_POD_READY_H_

#include <nlohmann/json.hpp>

namespace migserve::kube {

// Returns true if `pod` is Ready (condition Ready is True) and not being
// deleted.
bool PodReady(const nlohmann::json& pod);

// Returns true if `pod`'s phase is Failed (it will not run again).
bool PodFailed(const nlohmann::json& pod);

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_POD_READY_H_
