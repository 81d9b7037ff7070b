// A transition's goal as JSON, kept in the journal beside its plan so that a
// resumed plan keeps the floors it was made for:
//   {"required_before": {"svc": 120.5, ...}, "required_after": {...},
//    "target_gpus": 16, "survive": {"domain": "gpu", "keep": 1}}
// (survive only where the goal has it).
#ifndef MIGSERVE_CONTROLLER_GOAL_JSON_H_
#define MIGSERVE_CONTROLLER_GOAL_JSON_H_

#include <string>

#include "controller/safety_checker.h"
#include "util/status_or.h"

namespace migserve::controller {

std::string FormatGoal(const TransitionGoal& goal);

// Returns InvalidArgument naming `source` and the field for anything but a
// goal as FormatGoal writes it (rates finite and >= 0).
StatusOr<TransitionGoal> ParseGoal(const std::string& text,
                                   const std::string& source);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_GOAL_JSON_H_
