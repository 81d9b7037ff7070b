#include "workload/workload.h"

namespace migserve::workload {

const char* FailureDomainName(FailureDomain domain) {
  return domain == FailureDomain::kGpu ? "gpu" : "node";
}

std::optional<FailureDomain> ParseFailureDomain(std::string_view name) {
  if (name == "gpu") return FailureDomain::kGpu;
  if (name == "node") return FailureDomain::kNode;
  return std::nullopt;
}

int Workload::FindService(const std::string& name) const {
  for (size_t i = 0; i < services.size(); ++i) {
    if (services[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

queueing::ServiceTerms Workload::TermsOf(const Service& service) const {
  return {{latency_budget * service.latency_ms, max_procs},
          service.latency_ms,
          {Demand(service), arrival_cv, router, router_replicas},
          capacity_model};
}

llm::LlmCredit Workload::LlmCreditOf(const Service& service,
                                     const mig::GpuModel& gpu,
                                     const mig::Profile& profile) const {
  const llm::LlmModel& model = *llm_models->Find(service.model).value();
  llm::EngineOptions engine = LlmCalibration(model, gpu, profile).engine;
  engine.decode_scale *= 1 + llm_margin;
  engine.prefill_scale *= 1 + llm_margin;
  // The proxy sends an OpenAI service's requests to the replica with the
  // fewest in flight per credit (proxy/nginx_config.cc), not in a rotation.
  return llm::CreditOf(model, gpu, profile, *service.tokens,
                       queueing::PickedPerRequest(TermsOf(service).traffic),
                       engine);
}

}  // namespace migserve::workload
