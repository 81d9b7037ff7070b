// A deployment drawn as GPUs: nodes in order, each GPU a row of its memory
// slices with every instance a box at its placement.
#ifndef MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_
#define MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_

#include <string>

#include "deployment/deployment.h"
#include "report/svg.h"

namespace migserve::report {

// HTML: a section per node, an inline SVG in each, every GPU a row of its
// memory slices with each instance a labelled box. Every instance is a
// <g class="instance"> carrying data-node, data-gpu (the device index, or
// the id before placement), data-profile, data-start and data-service
// (empty when idle). With more than `compact_above` GPUs the fleet is drawn
// small instead ("fleet-map": a block per node, 4 px a memory slice, a
// tooltip per instance), so 1000 GPUs fit on a screen; every instance is
// still one element. GPU models come from the default catalog; unknown
// ones are drawn on 8 memory slices.
std::string DeploymentView(const deployment::Deployment& deployment,
                           const Palette& palette, int compact_above = 100);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_
