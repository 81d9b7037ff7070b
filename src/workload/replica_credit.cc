#include "workload/replica_credit.h"

#include <fmt/format.h>

#include <algorithm>

#include "llm/llm_credit.h"
#include "profile/capacity.h"
#include "queueing/capacity_model.h"

namespace migserve::workload {
namespace {

// The most any row of the choice measured (every row of the profile where
// it names no batch).
double MeasuredCeiling(const profile::ProfileTable& profiles,
                       const Service& service, const mig::GpuModel& gpu,
                       const mig::Profile& profile, RowChoice choice) {
  double most = 0;
  for (const profile::ProfileRow& row : profiles.rows) {
    if (row.model == service.model && row.gpu == gpu.name &&
        row.profile == profile.name &&
        (choice.batch == 0 ||
         (row.batch == choice.batch && row.procs == choice.procs))) {
      most = std::max(most, row.throughput);
    }
  }
  return most;
}

ReplicaCredit RowsCredit(const Workload& workload, const Service& service,
                         const profile::ProfileTable& profiles,
                         const mig::GpuModel& gpu, int profile_index,
                         RowChoice choice) {
  const mig::Profile& profile = gpu.profiles[profile_index];
  queueing::ServiceTerms terms = workload.TermsOf(service);
  const profile::CapacityLimits& limits = terms.limits;
  ReplicaCredit out;
  out.ceiling = MeasuredCeiling(profiles, service, gpu, profile, choice);
  out.ceiling_basis =
      fmt::format("its profile row measured in {}", profiles.source);
  if (choice.batch == 0) {
    queueing::Credit best = queueing::BestCredit(profiles, gpu, profile_index,
                                                 service.model, terms);
    if (best.row == nullptr) {
      out.why_not =
          !profiles.Measures(service.model, gpu.name, profile.name)
              ? fmt::format("model '{}' was not measured there", service.model)
              : fmt::format(
                    "no measured point of '{}' there meets its SLO (latency "
                    "limit {:.6g} ms, at most {} process(es)) or fits its "
                    "memory",
                    service.model, limits.latency_limit_ms, limits.max_procs);
      return out;
    }
    out.rate = best.capacity;
    out.row = *best.row;
    return out;
  }
  const profile::ProfileRow* row =
      profile::FindRow(profiles, service.model, gpu.name, profile.name,
                       choice.batch, choice.procs);
  if (row == nullptr || row->throughput <= 0) {
    out.why_not = fmt::format(
        "no measured point of '{}' on {} with batch {} and {} "
        "process(es)",
        service.model, profile.name, choice.batch, choice.procs);
  } else if (row->procs > limits.max_procs) {
    out.why_not = fmt::format("{} processes exceed max_procs {}", row->procs,
                              limits.max_procs);
  } else if (row->latency_ms > limits.latency_limit_ms) {
    out.why_not = fmt::format(
        "batch {} has latency {} ms, over the limit of {:.6g} ms for service "
        "'{}'",
        row->batch, row->latency_ms, limits.latency_limit_ms, service.name);
  } else if (!profile::RowFits(*row, profile, limits)) {
    out.why_not = fmt::format("batch {} needs {} GB, more than {} has",
                              row->batch, *row->memory_gb, profile.name);
  } else if (double credit = queueing::RowCapacity(profiles, *row, terms);
             credit <= 0) {
    out.why_not = fmt::format(
        "batch {} cannot keep the p99 latency of service '{}' within its SLO "
        "of {} ms (capacity_model: p99)",
        row->batch, service.name, service.latency_ms);
  } else {
    out.rate = credit;
    out.row = *row;
  }
  return out;
}

ReplicaCredit TokenCredit(const Workload& workload, const Service& service,
                          const mig::GpuModel& gpu, int profile_index) {
  const mig::Profile& profile = gpu.profiles[profile_index];
  llm::LlmCredit c = workload.LlmCreditOf(service, gpu, profile);
  ReplicaCredit out;
  out.ceiling_basis = "its LLM credit allows";
  if (c.rate <= 0) {
    out.why_not = c.why;
    return out;
  }
  const llm::LlmModel& model =
      *workload.llm_models->Find(service.model).value();
  const llm::LlmTerms& terms = *service.tokens;
  profile::ProfileRow row;
  row.model = service.model;
  row.gpu = gpu.name;
  row.profile = profile.name;
  row.batch = c.slice.max_batch;  // the engine's max_num_seqs
  row.throughput =
      llm::SaturationOf(c.slice, terms.prompt_tokens, terms.output_tokens)
          .output_tokens_per_s /
      std::max(1.0, terms.output_tokens);
  row.latency_ms = c.at_rate.latency_p50_ms;
  row.memory_gb = model.WeightBytes() / 1e9;
  out.rate = c.rate;
  out.ceiling = c.rate;
  out.row = std::move(row);
  return out;
}

}  // namespace

std::string CannotRunMessage(const Service& service, const std::string& profile,
                             const std::string& why_not) {
  return fmt::format("service '{}' cannot run on {}: {}", service.name, profile,
                     why_not);
}

ReplicaCredit CreditOf(const Workload& workload, const Service& service,
                       const profile::ProfileTable& profiles,
                       const mig::GpuModel& gpu, int profile,
                       RowChoice choice) {
  switch (service.kind.traits().credit) {
    case CreditSource::kProfileRows:
      return RowsCredit(workload, service, profiles, gpu, profile, choice);
    case CreditSource::kTokenModel:
      return TokenCredit(workload, service, gpu, profile);
  }
  return {};
}

}  // namespace migserve::workload
