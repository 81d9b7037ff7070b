// Checks a deployment against a workload: legal layouts, every instance's
// service able to run there within its SLO, every service at >= 100% of its
// required throughput. Capacities come from the profiles, never from the
// deployment file.
#ifndef MIGSERVE_DEPLOYMENT_VALIDATOR_H_
#define MIGSERVE_DEPLOYMENT_VALIDATOR_H_

#include <string>
#include <vector>

#include "deployment/deployment.h"
#include "mig/gpu_model.h"
#include "profile/profile_table.h"
#include "util/status_or.h"
#include "workload/workload.h"

namespace migserve::deployment {

struct ServiceReport {
  std::string name;
  double required = 0;
  double provided = 0;  // from the profiles
  int replicas = 0;
  double satisfaction() const { return provided / required; }
};

struct ValidationReport {
  // Each names the GPU, instance or service at fault.
  std::vector<std::string> problems;
  // What holds but deserves a look (a router other than the credits').
  std::vector<std::string> warnings;
  std::vector<ServiceReport> services;  // in workload order
  int gpus = 0;                         // GPUs listed
  int used_gpus = 0;                    // GPUs serving at least one replica

  bool ok() const { return problems.empty(); }
};

// Returns the report (whose ok() answers the question). Returns
// InvalidArgument if the question is malformed: the deployment is for
// another GPU than the workload, or an instance names a profile the GPU does
// not have.
StatusOr<ValidationReport> Validate(const Deployment& deployment,
                                    const workload::Workload& workload,
                                    const profile::ProfileTable& profiles,
                                    const mig::GpuModel& gpu);

// Returns InvalidArgument naming the file, GPU and instance of the first
// replica whose service is not in the deployment's `services`.
Status CheckReplicaServices(const Deployment& deployment);

// Returns InvalidArgument naming the file, GPU and instance of the first
// replica that declares more throughput, or a lower latency, than
// `profiles` measured for its model, profile, batch and processes (no capacity
// model credits more than the measurement), or whose point was not measured at
// all. Replicas without a batch are not checked, nor those of LLM services
// (`kind: llm`: their credits are modelled from token terms, docs/llm.md),
// which CheckModelledCredits holds to their slices' peaks.
Status CheckDeclaredThroughputs(const Deployment& deployment,
                                const profile::ProfileTable& profiles);

// Returns InvalidArgument naming the file, GPU and instance of the first
// replica of an LLM service that declares more than its slice could
// complete at its peaks (llm::PeakRequestRate of its model's entry,
// workload::Service::llm_model; a service without one is not checked), or
// of another service that declares more throughput, or a lower latency,
// than every shipped profile table that measured its point
// (profile::ShippedProfiles; a point none measured is not checked). It needs
// no profile table of the user's: every command that takes a deployment
// asks it, -p or not (issue 92: a 1g instance declaring 1e6 req/s passed
// plan, simulate and export without -p).
Status CheckModelledCredits(const Deployment& deployment);

// What every reader of a deployment asks before it counts the declared
// credits: CheckDeclaredThroughputs against `profiles` (the user's, when
// given: a refusal names them first), then CheckModelledCredits.
Status CheckDeclaredCredits(const Deployment& deployment,
                            const profile::ProfileTable* profiles);

}  // namespace migserve::deployment

#endif  // MIGSERVE_DEPLOYMENT_VALIDATOR_H_
