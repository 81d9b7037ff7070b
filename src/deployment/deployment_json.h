// The deployment JSON of DESIGN 3, written by `optimize` and read by
// `validate`, `plan` and `simulate`.
#ifndef MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_
#define MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_

#include <nlohmann/json.hpp>
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

// survive as JSON, {"domain": "gpu" | "node", "keep": F}, and back (also
// a transition goal's; `source` names the file in errors).
nlohmann::json SurviveJson(const workload::Survive& survive);
StatusOr<workload::Survive> ParseSurvive(const nlohmann::json& j,
                                         const std::string& source);

}  // namespace migserve::deployment

#endif  // MIGSERVE_DEPLOYMENT_DEPLOYMENT_JSON_H_
