// What the autoscaler reports through its ServingWorkload's status
// (deploy/base/crd.yaml), so that `kubectl get servingworkloads` says
// whether the intent people wrote is followed: the generation last read
// (observedGeneration) and the one followed (followedGeneration: every
// target written says it, summary.workload), with two conditions:
// Accepted (the last generation read parses and is followed; else why
// not, and which generation is followed instead) and Planned (the last
// round could plan the target from it; else what held it: a service the
// target serves and the workload lacks, the GPU budget, a failed round, a
// pause).
#ifndef MIGSERVE_AUTOSCALE_KUBERNETES_WORKLOAD_STATUS_H_
#define MIGSERVE_AUTOSCALE_KUBERNETES_WORKLOAD_STATUS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "autoscale/workload_source.h"

namespace migserve::autoscale {

// The status for `report` at `now`: a condition whose status did not
// change keeps its lastTransitionTime from `previous` (the status last
// written, or null).
nlohmann::json WorkloadStatusOf(const WorkloadReport& report,
                                const nlohmann::json& previous,
                                const std::string& now);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_KUBERNETES_WORKLOAD_STATUS_H_
