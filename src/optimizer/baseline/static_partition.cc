#include "optimizer/baseline/static_partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/tolerance.h"
#include "workload/replica_credit.h"

namespace migserve::optimizer {
namespace {

using deployment::GpuConfig;
using deployment::kIdle;

// Adds one instance of each of `profiles`, in order, at the first start that
// keeps the layout legal.
mig::Layout FirstFit(const Problem& problem, const std::vector<int>& profiles) {
  mig::Layout layout;
  for (int p : profiles) {
    for (int start : problem.gpu.profiles[p].starts) {
      mig::Layout next = layout;
      next.Add({p, start});
      if (IsLegal(problem.gpu, next, problem.mig)) {
        layout = std::move(next);
        break;
      }
    }
  }
  return layout;
}

// Why `service` has no capacity on `profile` (the credit's reason, as the
// capacity matrix keeps it).
std::string CannotRun(const Problem& problem, int service, int profile) {
  const std::string& why = problem.caps.why_not(service, profile);
  return workload::CannotRunMessage(
      problem.workload.services[service], problem.gpu.profiles[profile].name,
      why.empty() ? "the workload does not enable it" : why);
}

// The number of instances of utility `utility` that cover `missing`.
int InstancesNeeded(double missing, double utility) {
  return static_cast<int>(std::ceil(missing / utility - kRoundingTolerance));
}

}  // namespace

Solution HomogeneousOptimizer::Solve(const Problem& problem,
                                     const deployment::CompletionRates& initial,
                                     const SolveOptions&) {
  const mig::GpuModel& gpu = problem.gpu;
  int p = size_ == Size::kWhole ? gpu.WholeProfile()
                                : gpu.SmallestProfileWithCompute(1);
  if (p < 0) return Infeasible(fmt::format("{} has no such profile", gpu.name));
  mig::Layout layout =
      FirstFit(problem, std::vector<int>(gpu.profiles[p].starts.size(), p));
  std::vector<int> slots;  // the service of each instance, in GPU order
  for (int j = 0; j < problem.num_services(); ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    double u = problem.caps.utility(j, p);
    if (u <= 0) {
      return Infeasible(CannotRun(problem, j, p));
    }
    slots.insert(slots.end(), InstancesNeeded(1.0 - initial[j], u), j);
  }
  Solution solution;
  for (size_t k = 0; k < slots.size(); k += layout.size()) {
    GpuConfig config{layout, std::vector<int>(layout.size(), kIdle)};
    for (size_t i = 0; i < layout.size() && k + i < slots.size(); ++i) {
      config.services[i] = slots[k + i];
    }
    solution.configs.push_back(std::move(config));
  }
  return solution;
}

Solution MixOptimizer::Solve(const Problem& problem,
                             const deployment::CompletionRates& initial,
                             const SolveOptions&) {
  const mig::GpuModel& gpu = problem.gpu;
  std::vector<int> profiles = {gpu.SmallestProfileWithCompute(4),
                               gpu.SmallestProfileWithCompute(2),
                               gpu.SmallestProfileWithCompute(1)};
  if (std::count(profiles.begin(), profiles.end(), -1) > 0) {
    return Infeasible(
        fmt::format("{} has no 4g, 2g and 1g profiles", gpu.name));
  }
  mig::Layout layout = FirstFit(problem, profiles);
  if (layout.size() != 3) {
    return Infeasible(fmt::format("{} cannot hold 4g+2g+1g", gpu.name));
  }
  const auto& instances = layout.instances();
  Solution solution;
  for (int j = 0; j < problem.num_services(); ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    // Fill the instances that serve the service best first, so that the
    // last GPU leaves the least useful ones idle.
    std::vector<size_t> order = {0, 1, 2};
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return problem.caps.utility(j, instances[a].profile) >
             problem.caps.utility(j, instances[b].profile);
    });
    if (problem.caps.utility(j, instances[order[0]].profile) <= 0) {
      return Infeasible(CannotRun(problem, j, instances[0].profile));
    }
    double rate = initial[j];
    while (!deployment::Satisfied(rate)) {
      GpuConfig config{layout, std::vector<int>(3, kIdle)};
      for (size_t k : order) {
        double u = problem.caps.utility(j, instances[k].profile);
        if (deployment::Satisfied(rate) || u <= 0) continue;
        config.services[k] = j;
        rate += u;
      }
      solution.configs.push_back(std::move(config));
    }
  }
  return solution;
}

}  // namespace migserve::optimizer
