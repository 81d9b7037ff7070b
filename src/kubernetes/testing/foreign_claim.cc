#include "kubernetes/testing/foreign_claim.h"

#include <fmt/format.h>

#include "kubernetes/dra_objects.h"
#include "kubernetes/serving_spec.h"

namespace migserve::kubernetes {

void PutForeignClaim(kube::ApiServerStandIn* server,
                     const std::string& namespace_, const std::string& name,
                     const std::string& node, int minor,
                     const mig::Profile& profile) {
  ServingSpec spec;
  spec.namespace_ = namespace_;
  server->Put(
      fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}",
                  namespace_, name),
      nlohmann::json(DraClaim(
          name, kube::Labels(), "",
          DraSelector(profile, fmt::format("GPU-{}-{}", node, minor)), spec)));
  server->Put(fmt::format("/api/v1/namespaces/{}/pods/{}", namespace_, name),
              {{"spec",
                {{"nodeName", node},
                 {"resourceClaims",
                  nlohmann::json::array(
                      {{{"name", "mig"}, {"resourceClaimName", name}}})}}}});
}

}  // namespace migserve::kubernetes
