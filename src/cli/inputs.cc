#include "cli/inputs.h"

#include <fmt/format.h>

#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"
#include "workload/measurement_gaps.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {

void AddWorkloadOptions(CLI::App* app, std::string* workload,
                        std::string* profiles) {
  app->add_option("-w,--workload", *workload, "Workload YAML (- for stdin)")
      ->required();
  app->add_option("-p,--profiles", *profiles, "Profile CSV (- for stdin)")
      ->required();
}

StatusOr<std::unique_ptr<Inputs>> LoadInputs(const std::string& workload_path,
                                             const std::string& profile_path,
                                             std::ostream& err,
                                             double progress_every_s) {
  MIGSERVE_ASSIGN_OR_RETURN(workload::Workload workload,
                            workload::LoadWorkload(workload_path));
  return BuildInputs(std::move(workload), profile_path, err, progress_every_s);
}

StatusOr<std::unique_ptr<Inputs>> BuildInputs(workload::Workload workload,
                                              const std::string& profile_path,
                                              std::ostream& err,
                                              double progress_every_s) {
  auto in = std::make_unique<Inputs>();
  in->workload = std::move(workload);
  MIGSERVE_ASSIGN_OR_RETURN(in->profiles,
                            profile::LoadProfileCsv(profile_path));
  MIGSERVE_ASSIGN_OR_RETURN(in->gpu,
                            mig::GpuCatalog::Default().Find(in->workload.gpu));
  WarnMeasurementGaps(in->workload, in->profiles, err);
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::CapacityMatrix caps,
      workload::CapacityMatrix::Build(
          in->workload, in->profiles, *in->gpu, true,
          progress_every_s > 0 ? LogSink([&err](const std::string& line) {
            err << "migserve: " << line << std::endl;
          })
                               : LogSink(),
          progress_every_s));
  in->caps.emplace(std::move(caps));
  in->problem.emplace(in->workload, *in->gpu, *in->caps);
  return in;
}

void WarnMeasurementGaps(const workload::Workload& workload,
                         const profile::ProfileTable& profiles,
                         std::ostream& err) {
  for (const workload::GpuOffer& offer : workload.offers) {
    auto gpu = mig::GpuCatalog::Default().Find(offer.name);
    if (!gpu.ok()) continue;  // the command reports the unknown GPU
    std::string where =
        workload.offers.size() > 1 ? offer.name + ": " : std::string();
    for (const workload::MeasurementGap& gap :
         workload::FindMeasurementGaps(workload, profiles, **gpu)) {
      err << fmt::format(
          "migserve: warning: {}{}: no measurements on {}; those profiles "
          "are not used\n",
          where, gap.model, fmt::join(gap.profiles, ", "));
    }
  }
}

}  // namespace migserve::cli
