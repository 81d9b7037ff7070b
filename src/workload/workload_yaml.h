// The workload YAML (DESIGN 3):
//   gpu: A100-SXM4-80GB
//   latency_budget: 1.0       # rows with latency <= budget x SLO may serve
//   capacity_model: p99       # optional: p99 (default) or paper
//   max_procs: 1
//   legacy_4g3g: false        # optional: pre-R510 A100 rule
//   optional_profiles: false  # optional: +me and double-memory 1g
//   services:
//     - {name: resnet50-a, model: resnet50, throughput: 2000, latency_ms: 100}
#ifndef MIGSERVE_WORKLOAD_WORKLOAD_YAML_H_
#define MIGSERVE_WORKLOAD_WORKLOAD_YAML_H_

#include <string>

#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::workload {

// Parses `text` read from `source`. Returns InvalidArgument
// "source:line: field: reason" for a type error, a missing or non-positive
// number, a duplicate service name, an unknown field; NotFound-like
// InvalidArgument for an unknown GPU.
StatusOr<Workload> ParseWorkload(const std::string& text,
                                 const std::string& source);

// Reads and parses the file at `path`; NotFound if it cannot be read.
StatusOr<Workload> LoadWorkload(const std::string& path);

// Returns the workload as YAML that ParseWorkload reads back.
std::string FormatWorkload(const Workload& workload);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_WORKLOAD_YAML_H_
