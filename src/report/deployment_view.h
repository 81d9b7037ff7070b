// A deployment drawn as GPUs: nodes in order, each GPU a row of its memory
// slices with every instance a box at its placement.
#ifndef MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_
#define MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_

#include <string>

#include "deployment/deployment.h"
#include "report/svg.h"

namespace migserve::report {

// HTML (a section per node, an inline SVG in each). Every instance is a
// <g class="instance"> carrying data-node, data-gpu (the device index, or
// the id before placement), data-profile, data-start and data-service
// (empty when idle). With more than `collapse_above` GPUs, identical GPUs
// of one node (same model, layout, services and batches) are drawn once
// with a count ("x 12", data-count="12") so a 1000-GPU fleet stays
// readable; otherwise every GPU is drawn. StatusOr-free: GPU models come
// from the default catalog, unknown ones drawn on 8 memory slices.
std::string DeploymentView(const deployment::Deployment& deployment,
                           const Palette& palette, int collapse_above = 100);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_DEPLOYMENT_VIEW_H_
