#include "cli/inputs.h"

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {

StatusOr<std::unique_ptr<Inputs>> LoadInputs(const std::string& workload_path,
                                             const std::string& profile_path) {
  auto in = std::make_unique<Inputs>();
  MIGSERVE_ASSIGN_OR_RETURN(in->workload,
                            workload::LoadWorkload(workload_path));
  MIGSERVE_ASSIGN_OR_RETURN(in->profiles,
                            profile::LoadProfileCsv(profile_path));
  MIGSERVE_ASSIGN_OR_RETURN(in->gpu,
                            mig::GpuCatalog::Default().Find(in->workload.gpu));
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::CapacityMatrix caps,
      workload::CapacityMatrix::Build(in->workload, in->profiles, *in->gpu));
  in->caps.emplace(std::move(caps));
  in->problem.emplace(in->workload, *in->gpu, *in->caps);
  return in;
}

}  // namespace migserve::cli
