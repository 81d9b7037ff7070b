// The deployment JSON of DESIGN 3, written by `optimize` and read by
// `validate`, `plan` and `simulate`.
#ifndef MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_
#define MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_

#include <string>

#include "deployment/deployment.h"
#include "util/status_or.h"

namespace migserve::deployment {

// Returns the deployment as indented JSON with a trailing newline.
std::string FormatDeployment(const Deployment& deployment);

// Parses `text` read from `source`. Returns InvalidArgument
// "source:line:column: reason" for malformed JSON and
// "source: gpus[2].instances[0].profile: reason" for a missing or mistyped
// field. Profiles are not checked against the GPU here (see Validate).
StatusOr<Deployment> ParseDeployment(const std::string& text,
                                     const std::string& source);

// Reads and parses the file at `path`; NotFound if it cannot be read.
StatusOr<Deployment> LoadDeployment(const std::string& path);

}  // namespace migserve::deployment

#endif  // MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_
