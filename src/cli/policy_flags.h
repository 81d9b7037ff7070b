// The autoscaling policy's flags, shared by `replay` and `autoscale`
// (autoscale/policy.h; docs/autoscale.md).
#ifndef MIGSERVE_CLI_POLICY_FLAGS_H_
#define MIGSERVE_CLI_POLICY_FLAGS_H_

#include <CLI/CLI.hpp>

#include "autoscale/policy.h"

namespace migserve::cli {

void AddPolicyOptions(CLI::App* app, autoscale::PolicyOptions* policy);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_POLICY_FLAGS_H_
