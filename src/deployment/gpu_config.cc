#include "deployment/gpu_config.h"

namespace migserve::deployment {

Utility ConfigUtility(const GpuConfig& config,
                      const workload::CapacityMatrix& caps) {
  Utility u(caps.num_services(), 0.0);
  AddConfig(config, caps, &u);
  return u;
}

void AddConfig(const GpuConfig& config, const workload::CapacityMatrix& caps,
               CompletionRates* rates) {
  const auto& instances = config.layout.instances();
  for (size_t k = 0; k < instances.size(); ++k) {
    int s = config.services[k];
    if (s != kIdle) (*rates)[s] += caps.utility(s, instances[k].profile);
  }
}

CompletionRates Completion(const std::vector<GpuConfig>& configs,
                           const workload::CapacityMatrix& caps,
                           const CompletionRates& initial) {
  CompletionRates rates =
      initial.empty() ? CompletionRates(caps.num_services(), 0.0) : initial;
  for (const GpuConfig& c : configs) AddConfig(c, caps, &rates);
  return rates;
}

bool AllSatisfied(const CompletionRates& rates) {
  for (double r : rates) {
    if (!Satisfied(r)) return false;
  }
  return true;
}

}  // namespace migserve::deployment
