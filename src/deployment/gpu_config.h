// GpuConfig (paper 5.1): a layout plus the service on each instance; its
// utility, and the completion rates of a set of configs.
#ifndef MIGSERVE_DEPLOYMENT_GPU_CONFIG_H_
#define MIGSERVE_DEPLOYMENT_GPU_CONFIG_H_

#include <vector>

#include "mig/layout.h"
#include "util/tolerance.h"
#include "workload/capacity_matrix.h"

namespace migserve::deployment {

// Per service, the fraction of its required throughput served (1.0 = 100%).
using CompletionRates = std::vector<double>;
// Per service, the fraction one instance or GPU config adds.
using Utility = std::vector<double>;

inline constexpr int kIdle = -1;

struct GpuConfig {
  mig::Layout layout;
  // services[k] serves on layout.instances()[k]; kIdle if none.
  std::vector<int> services;

  auto operator<=>(const GpuConfig&) const = default;
};

// Returns the utility of `config`: per service, the sum over its instances
// of throughput / required throughput.
Utility ConfigUtility(const GpuConfig& config,
                      const workload::CapacityMatrix& caps);

// Adds the utility of `config` to `rates`.
void AddConfig(const GpuConfig& config, const workload::CapacityMatrix& caps,
               CompletionRates* rates);

// Returns the completion rates of `configs` starting from `initial` (all
// zero if empty).
CompletionRates Completion(const std::vector<GpuConfig>& configs,
                           const workload::CapacityMatrix& caps,
                           const CompletionRates& initial = {});

// Returns true if `rate` is at least 1, within 1e-9 for rounding.
inline bool Satisfied(double rate) { return rate >= 1.0 - kRateTolerance; }

// Returns true if every rate is Satisfied.
bool AllSatisfied(const CompletionRates& rates);

}  // namespace migserve::deployment

#endif  // MIGSERVE_DEPLOYMENT_GPU_CONFIG_H_
