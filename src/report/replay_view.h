// A day as `replay` replayed it (report --replay): how each way of
// provisioning fared, GPUs in use over time against static provisioning
// for the peak with every move of the policy marked, and per service its
// ready capacity against the rate it received.
#ifndef MIGSERVE_REPORT_REPLAY_VIEW_H_
#define MIGSERVE_REPORT_REPLAY_VIEW_H_

#include <string>

#include "autoscale/replay.h"
#include "report/report_inputs.h"
#include "report/svg.h"

namespace migserve::report {

// One row per way of provisioning (policy, static peak, oracle): GPU-hours,
// peak GPUs, transitions and minutes short: <tr data-run data-gpu-hours>.
std::string ReplayRunsTable(const autoscale::ReplayReport& day);

// GPUs in use over time (<polyline class="gpus-line">), static
// provisioning's GPUs (<line class="static-peak">), and each move as
// <line class="move up|down" data-time data-gpus-before data-gpus-after>
// with its reason as title: <svg class="replay-gpus" data-peak data-static>.
std::string ReplayGpusView(const autoscale::ReplayReport& day);

// Per service, its ready capacity (a step line) and, with `rates`, the
// rate it received (dashed), each move marked, and the policy's minutes
// short as the replay measured them: <svg class="replay-service"
// data-service data-short-minutes>.
std::string ReplayServicesView(const autoscale::ReplayReport& day,
                               const ObservedRates* rates,
                               const Palette& palette);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_REPLAY_VIEW_H_
