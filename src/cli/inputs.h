// Loading what most commands start from: a workload, the profiles, the GPU
// model they name, and the capacity matrix.
#ifndef MIGSERVE_CLI_INPUTS_H_
#define MIGSERVE_CLI_INPUTS_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "mig/gpu_model.h"
#include "optimizer/problem.h"
#include "profile/profile_table.h"
#include "util/status_or.h"
#include "workload/capacity_matrix.h"
#include "workload/workload.h"

namespace migserve::cli {

struct Inputs {
  workload::Workload workload;
  profile::ProfileTable profiles;
  const mig::GpuModel* gpu = nullptr;
  std::optional<workload::CapacityMatrix> caps;
  std::optional<optimizer::Problem> problem;  // refers to the fields above
};

// Loads both files and builds the problem, warning on `err` about profiles
// the workload's models were not measured on. Returns the first error,
// naming file, line and field. The result is heap-allocated because
// `problem` refers to the other fields.
// Adds the required -w/--workload and -p/--profiles (either may be - for
// stdin), as optimize, compare and validate take them.
void AddWorkloadOptions(CLI::App* app, std::string* workload,
                        std::string* profiles);

// Warnings go to `err`, and, every `progress_every_s` (0: never), how far
// the credits are.
StatusOr<std::unique_ptr<Inputs>> LoadInputs(const std::string& workload_path,
                                             const std::string& profile_path,
                                             std::ostream& err,
                                             double progress_every_s = 0);
// The same from a workload read already (a region's takes seconds to
// parse).
StatusOr<std::unique_ptr<Inputs>> BuildInputs(workload::Workload workload,
                                              const std::string& profile_path,
                                              std::ostream& err,
                                              double progress_every_s = 0);

// Prints one warning line per model and offered GPU with profiles that have
// no rows ("migserve: warning: bert: no measurements on 2g.20gb, 4g.40gb;
// those profiles are not used"), the GPU named first for a mixed fleet.
void WarnMeasurementGaps(const workload::Workload& workload,
                         const profile::ProfileTable& profiles,
                         std::ostream& err);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_INPUTS_H_
