// Someone else's MIG claim on a node migserve partitions through DRA, for
// tests: a ResourceClaim for one device of `profile` on GPU `minor` of
// `node` (the UUID DraScheduler gives it), in `namespace_`, with the pod of
// the same name that uses it, so that the scheduler allocates it first-fit
// as it would a user's (issue 91: a claim not migserve's on its GPUs).
#ifndef MIGSERVE_KUBERNETES_TESTING_FOREIGN_CLAIM_H_
#define MIGSERVE_KUBERNETES_TESTING_FOREIGN_CLAIM_H_

#include <string>

#include "kube/testing/api_server_standin.h"
#include "mig/gpu_model.h"

namespace migserve::kubernetes {

void PutForeignClaim(kube::ApiServerStandIn* server,
                     const std::string& namespace_, const std::string& name,
                     const std::string& node, int minor,
                     const mig::Profile& profile);

}  // namespace migserve::kubernetes

#endif  // MIGSERVE_KUBERNETES_TESTING_FOREIGN_CLAIM_H_
