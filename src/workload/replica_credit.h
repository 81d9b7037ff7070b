// The one credit path (docs/capacity.md, docs/llm.md): what one replica of
// a service may be given on a profile, whatever the service's kind. The
// capacity matrix (and with it every optimizer, the controller's degraded
// target and the autoscaler's sizer) and `validate` ask this one question;
// the kind's credit facet (workload/service_kind.h) decides how it is
// answered.
#ifndef MIGSERVE_WORKLOAD_REPLICA_CREDIT_H_
#define MIGSERVE_WORKLOAD_REPLICA_CREDIT_H_

#include <optional>
#include <string>

#include "mig/gpu_model.h"
#include "profile/profile_table.h"
#include "workload/workload.h"

namespace migserve::workload {

struct ReplicaCredit {
  // The credit: requests/s the replica may be given within its SLO; 0 where
  // it cannot run there.
  double rate = 0;
  // What the replica runs with: the measured row of its batch and
  // processes; for the token model, the engine's most sequences as its
  // batch, its median request latency at its credit, its weights' memory.
  // Its `throughput` is what the replica completes kept busy (measured, or
  // the token model's saturated rate), never the credit.
  std::optional<profile::ProfileRow> row;
  // The most a deployment may declare for this replica (routes are
  // weighted by what it declares), and what that bound is, for messages:
  // a measured row's throughput ("its profile row measured in FILE"; a
  // declared credit depends on the rates it was made for), or the token
  // model's credit ("its LLM credit").
  double ceiling = 0;
  std::string ceiling_basis;
  // Why it cannot run there, where rate is 0: "model 'm' was not measured
  // there" (CannotRunMessage makes the sentence).
  std::string why_not;
};

// "service 'x' cannot run on P: WHY", as every command says it.
std::string CannotRunMessage(const Service& service, const std::string& profile,
                             const std::string& why_not);

// The row a deployment names: batch 0 for the best the profile allows.
struct RowChoice {
  int batch = 0;
  int procs = 1;
};

// The credit of one replica of `service` (of `workload`) on `gpu`'s profile
// `profile`, on `choice`'s row. The token model has one row per profile
// and ignores `choice`.
ReplicaCredit CreditOf(const Workload& workload, const Service& service,
                       const profile::ProfileTable& profiles,
                       const mig::GpuModel& gpu, int profile,
                       RowChoice choice = {});

}  // namespace migserve::workload

#endif  // MIGSERVE_WORKLOAD_REPLICA_CREDIT_H_
