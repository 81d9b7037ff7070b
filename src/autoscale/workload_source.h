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

// What the autoscaler says of the workload it follows, after its first
// read and after each round (a ServingWorkload's status:
// autoscale/kubernetes/workload_status.h).
struct WorkloadReport {
  long long observed = 0;  // the generation last read
  long long followed = 0;  // the generation followed; 0: none
  int services = 0;        // the followed generation's
  std::string refused;     // why `observed` is not followed; "" if it is
  // The last round: whether it could plan the target from the workload
  // (false: held by a problem or a pause), why in one CamelCase word (the
  // Event's reason where it said one), and a sentence.
  struct RoundSaid {
    bool planned = false;
    std::string reason;
    std::string message;
  };
  std::optional<RoundSaid> round;  // none before the first
};

struct WorkloadSource {
  std::string describe;  // "servingworkload NS/NAME", for messages
  std::string name;      // "NS/NAME": summary.workload.name
  std::function<StatusOr<WorkloadText>()> read;
  // Hears the reports; may be empty.
  std::function<void(const WorkloadReport&)> report;
};

// A workload and, if it came from a resource, which version.
struct FollowedWorkload {
  std::shared_ptr<const workload::Workload> workload;
  std::optional<deployment::WorkloadOrigin> origin;
};

// Reads and parses `source`: InvalidArgument naming it (and the field) for
// a spec the workload parser refuses, reported (source.report) first.
StatusOr<FollowedWorkload> ReadWorkloadSource(const WorkloadSource& source);

// Parses `text`, a read of `source`, as ReadWorkloadSource does.
StatusOr<FollowedWorkload> ParseWorkloadText(const WorkloadSource& source,
                                             const WorkloadText& text);

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_WORKLOAD_SOURCE_H_
