// A plan for people (plan --format text): its actions in stages, the
// actions of a stage able to start together once the earlier stages are
// done, every GPU named by node and index.
#ifndef MIGSERVE_CLUSTER_PLAN_TEXT_H_
#define MIGSERVE_CLUSTER_PLAN_TEXT_H_

#include <string>

#include "cluster/action.h"

namespace migserve::cluster {

// "stage 1 of 3: 12 actions\n  action 0 (create bert on GPU node-0/3
// 1g.10gb@0)\n ..." with each action's dependencies from earlier stages.
std::string FormatPlanText(const TransitionPlan& plan);

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_PLAN_TEXT_H_
