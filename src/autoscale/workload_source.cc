#include "autoscale/workload_source.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <utility>

#include "workload/workload_yaml.h"

namespace migserve::autoscale {

StatusOr<FollowedWorkload> ReadWorkloadSource(const WorkloadSource& source) {
  MIGSERVE_ASSIGN_OR_RETURN(WorkloadText text, source.read());
  StatusOr<FollowedWorkload> parsed = ParseWorkloadText(source, text);
  if (!parsed.ok() && source.report) {
    WorkloadReport refused;
    refused.observed = text.generation;
    refused.refused = parsed.status().message();
    source.report(refused);
  }
  return parsed;
}

StatusOr<FollowedWorkload> ParseWorkloadText(const WorkloadSource& source,
                                             const WorkloadText& text) {
  // A workload file may name files next to it; a resource is read where
  // there are none.
  try {
    YAML::Node root = YAML::Load(text.yaml);
    for (const char* key : {"llm_models", "llm_measurements"}) {
      if (root.IsMap() && root[key]) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}: a ServingWorkload names no file (it is read where "
            "there is none): give the LLM services the shipped table and no "
            "measurements, or run autoscale -w on a workload file",
            source.describe, key));
      }
    }
  } catch (const YAML::Exception&) {
    // The parser below says where.
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      workload::Workload parsed,
      workload::ParseWorkload(text.yaml, source.describe));
  return FollowedWorkload{
      std::make_shared<const workload::Workload>(std::move(parsed)),
      deployment::WorkloadOrigin{source.name, text.generation}};
}

}  // namespace migserve::autoscale
