// The deployments shipped in data/deployments/, for tests.
#ifndef MIGSERVE_DEPLOYMENT_TESTING_SHIPPED_H_
#define MIGSERVE_DEPLOYMENT_TESTING_SHIPPED_H_

#include <string>

#include "deployment/deployment_json.h"
#include "util/test_util.h"

namespace migserve::testing {

// data/deployments/<name>.json, parsed; aborts the test binary if it does
// not parse.
inline deployment::Deployment ShippedDeployment(const std::string& name) {
  return deployment::LoadDeployment(
             SourcePath("data/deployments/" + name + ".json"))
      .value();
}

}  // namespace migserve::testing

#endif  // MIGSERVE_DEPLOYMENT_TESTING_SHIPPED_H_
