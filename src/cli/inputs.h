// Loading what most commands start from: a workload, the profiles, the GPU
// model they name, and the capacity matrix.
#ifndef MIGSERVE_CLI_INPUTS_H_
#define MIGSERVE_CLI_INPUTS_H_

#include <memory>
#include <optional>
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

// Loads both files and builds the problem. Returns the first error, naming
// file, line and field. The result is heap-allocated because `problem`
// refers to the other fields.
StatusOr<std::unique_ptr<Inputs>> LoadInputs(const std::string& workload_path,
                                             const std::string& profile_path);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_INPUTS_H_
