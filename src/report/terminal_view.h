// `migserve show`: a deployment in the terminal. Each GPU is a row of its
// memory slices, 7 characters each, grouped by node; every instance is a
// bracketed cell spanning its slices with its service's code, profile and
// batch; a legend names the codes.
#ifndef MIGSERVE_REPORT_TERMINAL_VIEW_H_
#define MIGSERVE_REPORT_TERMINAL_VIEW_H_

#include <string>

#include "deployment/deployment.h"

namespace migserve::report {

// Plain ASCII apart from the "×" of a collapsed group (see GroupGpus).
std::string TerminalView(const deployment::Deployment& deployment,
                         int collapse_above = 100);

// The same view as JSON (`show --format json`, docs/formats.md): per node
// its GPUs and how many serve, and its groups of identical GPUs, each with
// its label, model, count and instances (profile, start, service or null,
// batch).
std::string TerminalViewJson(const deployment::Deployment& deployment,
                             int collapse_above = 100);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_TERMINAL_VIEW_H_
