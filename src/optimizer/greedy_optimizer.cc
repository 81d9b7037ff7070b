#include "optimizer/greedy_optimizer.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace migserve::optimizer {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

bool AlmostSatisfied(const ConfigSpace& space, const CompletionRates& rates,
                     const GreedyOptions& options, int s) {
  return !deployment::Satisfied(rates[s]) &&
         1.0 - rates[s] <= options.almost_satisfied * space.best_single(s);
}

// Fills the instances of `config` marked kIdle in `open` with the service of
// the largest score gain each, largest instances first, and returns the
// config's score.
double FillOpenInstances(const ConfigSpace& space, const CompletionRates& rates,
                         const ScoreRule& rule, const std::vector<bool>& open,
                         GpuConfig* config) {
  const workload::CapacityMatrix& caps = space.problem().caps;
  const mig::GpuModel& gpu = space.problem().gpu;
  const int n = caps.num_services();
  std::vector<double> added(n, 0.0);
  const auto& instances = config->layout.instances();
  for (size_t k = 0; k < instances.size(); ++k) {
    int s = config->services[k];
    if (s != kIdle) added[s] += caps.utility(s, instances[k].profile);
  }
  std::vector<size_t> order;
  for (size_t k = 0; k < instances.size(); ++k) {
    if (open[k]) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return gpu.profiles[instances[x].profile].compute_slices >
           gpu.profiles[instances[y].profile].compute_slices;
  });
  for (size_t k : order) {
    int p = instances[k].profile;
    int best = kIdle;
    double best_gain = 0;
    for (int s = 0; s < n; ++s) {
      double u = caps.utility(s, p);
      if (u <= 0 || rates[s] >= 1.0) continue;
      double gain =
          rule.Term(rates[s], added[s] + u) - rule.Term(rates[s], added[s]);
      if (gain > best_gain) {
        best_gain = gain;
        best = s;
      }
    }
    config->services[k] = best;
    if (best != kIdle) added[best] += caps.utility(best, p);
  }
  double score = 0;
  for (int s = 0; s < n; ++s) score += rule.Term(rates[s], added[s]);
  return score;
}

}  // namespace

GpuConfig BestMixMore(const ConfigSpace& space, const CompletionRates& rates,
                      const GreedyOptions& options,
                      const std::vector<int>& services, double* score) {
  const workload::CapacityMatrix& caps = space.problem().caps;
  const int num_profiles =
      static_cast<int>(space.problem().gpu.profiles.size());
  GpuConfig best;
  *score = 0;
  for (int s : services) {
    if (!AlmostSatisfied(space, rates, options, s)) continue;
    double missing = 1.0 - rates[s];
    for (size_t m = 0; m < space.multisets().size(); ++m) {
      const mig::Multiset& counts = space.multisets()[m];
      const mig::Layout& layout = space.layouts()[m];
      std::array<int, kMaxProfiles> take{};
      std::array<int, kMaxProfiles> limit{};
      double smallest = 1e300;
      for (int p = 0; p < num_profiles; ++p) {
        limit[p] = caps.throughput(s, p) > 0 ? counts[p] : 0;
        if (limit[p] > 0) smallest = std::min(smallest, caps.utility(s, p));
      }
      // Every non-empty share for s that overshoots what s misses by less
      // than one instance; the rest of the GPU goes to other services.
      while (true) {
        int p = 0;
        while (p < num_profiles && take[p] == limit[p]) take[p++] = 0;
        if (p == num_profiles) break;
        ++take[p];
        double u = 0;
        for (int q = 0; q < num_profiles; ++q)
          u += take[q] * caps.utility(s, q);
        if (u - smallest >= missing) continue;
        GpuConfig config{layout, std::vector<int>(layout.size(), kIdle)};
        std::vector<bool> open(layout.size(), true);
        std::array<int, kMaxProfiles> given{};
        const auto& instances = layout.instances();
        for (size_t k = 0; k < instances.size(); ++k) {
          int q = instances[k].profile;
          if (given[q] < take[q]) {
            ++given[q];
            config.services[k] = s;
            open[k] = false;
          }
        }
        double sc =
            FillOpenInstances(space, rates, options.score, open, &config);
        if (sc > *score) {
          *score = sc;
          best = std::move(config);
        }
      }
    }
  }
  return best;
}

std::vector<GpuConfig> Greedy(const ConfigSpace& space,
                              const CompletionRates& initial,
                              const GreedyOptions& options) {
  const int n = space.problem().num_services();
  const auto& configs = space.configs();
  const auto& groups = space.groups();
  CompletionRates rates = initial;
  std::vector<int> version(groups.size(), 0);
  std::vector<int> best_in_group(groups.size(), -1);
  // (score, -group, version): the highest score first, then the lowest
  // group index, so that ties break the same way every run.
  std::priority_queue<std::tuple<double, int, int>> heap;
  auto rescore = [&](int g) {
    double best = 0;
    int arg = -1;
    for (int k = groups[g].begin; k < groups[g].end; ++k) {
      double sc = space.Score(configs[k], rates, options.score);
      if (sc > best) {
        best = sc;
        arg = k;
      }
    }
    best_in_group[g] = arg;
    ++version[g];
    if (arg >= 0) heap.emplace(best, -g, version[g]);
  };
  for (size_t g = 0; g < groups.size(); ++g) rescore(static_cast<int>(g));
  std::vector<int> all(n);
  for (int s = 0; s < n; ++s) all[s] = s;

  std::vector<GpuConfig> out;
  while (!deployment::AllSatisfied(rates)) {
    while (!heap.empty() &&
           std::get<2>(heap.top()) != version[-std::get<1>(heap.top())]) {
      heap.pop();
    }
    double pair_score = heap.empty() ? 0 : std::get<0>(heap.top());
    double mix_score = 0;
    GpuConfig chosen;
    if (options.mix_more) {
      chosen = BestMixMore(space, rates, options, all, &mix_score);
    }
    if (mix_score <= pair_score) {
      chosen = space.Expand(configs[best_in_group[-std::get<1>(heap.top())]]);
    }
    std::vector<int> touched;
    for (int s : chosen.services) {
      if (s != kIdle) touched.push_back(s);
    }
    deployment::AddConfig(chosen, space.problem().caps, &rates);
    out.push_back(std::move(chosen));
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::vector<bool> dirty(groups.size(), false);
    for (int s : touched) {
      for (int g : space.groups_of(s)) dirty[g] = true;
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      if (dirty[g]) rescore(static_cast<int>(g));
    }
  }
  return out;
}

Solution GreedyOptimizer::Solve(const Problem& problem,
                                const CompletionRates& initial,
                                const SolveOptions& options) {
  ConfigSpace space(problem);
  Solution solution;
  solution.configs = Greedy(space, initial, options.greedy);
  return solution;
}

}  // namespace migserve::optimizer
