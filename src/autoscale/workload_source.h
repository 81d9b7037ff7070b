// The workload an autoscaler follows (docs/autoscale.md, "The workload as a
// resource"): a file's, read once, or a resource's (a ServingWorkload),
// read every round: a new generation, once it parses, is followed from that
// round on, and every target written from it says which generation it came
// from (a deployment's summary.workload). A generation that does not parse
// is named and the last good one kept.
#ifndef MIGSERVE_AUTOSCALE_WORKLOAD_SOURCE_H_
#define MIGSERVE_AUTOSCALE_WORKLOAD_SOURCE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "deployment/deployment.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::autoscale {

// One read of the resource: the workload as YAML text and its generation.
struct WorkloadText {
  std::string yaml;
  long long generation = 0;
};

struct WorkloadSource {
  std::string describe;  // "servingworkload NS/NAME", for messages
  std::string name;      // "NS/NAME": summary.workload.name
  std::function<StatusOr<WorkloadText>()> read;
};

// A workload and, if it came from a resource, which version.
struct FollowedWorkload {
  std::shared_ptr<const workload::Workload> workload;
  std::optional<deployment::WorkloadOrigin> origin;
};

// Reads and parses `source`: InvalidArgument naming it (and the field) for
// a spec the workload parser refuses.
StatusOr<FollowedWorkload> ReadWorkloadSource(const WorkloadSource& source);

// Parses `text`, a read of `source`, as ReadWorkloadSource does.
StatusOr<FollowedWorkload> ParseWorkloadText(const WorkloadSource& source,
                                             const WorkloadText& text);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_WORKLOAD_SOURCE_H_
