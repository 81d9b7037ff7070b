// Converts ParvaGPU's published A100-80GB measurements and SLO scenarios
// (SC'24; MIT) into the canonical profile CSV and workloads.
//
// DIR/prof_data/<model>.csv: "Mig instance,Batch size,Workload Number,
//   Throughput,Latency" with throughput per process and latency in seconds.
// DIR/SLO/SLO_req_rate.csv, SLO_latency.csv: one scenario per row, one model
//   per column in the alphabetical order of the prof_data files; N/A = absent.
#ifndef MIGSERVE_WORKLOAD_PARVAGPU_IMPORT_H_
#define MIGSERVE_WORKLOAD_PARVAGPU_IMPORT_H_

#include <string>
#include <vector>

#include "profile/profile_table.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::workload {

struct ParvaGpuImport {
  profile::ProfileTable profiles;
  std::vector<Workload> scenarios;    // SLO1..SLO6, in file order
  std::vector<std::string> warnings;  // skipped duplicates
};

// ParvaGPU's rules: a batch's latency may use 0.45 of the SLO, and an
// instance runs up to 5 MPS processes (it profiled 1 to 5, and its published
// deployments run 4 and 5; with at most 3 its algorithm needs 17 GPUs on
// SLO6 instead of the published 16).
constexpr double kParvaLatencyBudget = 0.45;
constexpr int kParvaMaxProcs = 5;

// Reads ParvaGPU's files under `dir`. Throughput becomes the whole
// instance's (per process x processes), latency milliseconds; rows of zeros
// (not measured) are skipped; a repeated (size, batch, processes) key keeps
// its first row and adds a warning. Returns InvalidArgument naming file,
// line and column for a malformed file, NotFound for a missing one.
StatusOr<ParvaGpuImport> ImportParvaGpu(const std::string& dir);

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_PARVAGPU_IMPORT_H_
