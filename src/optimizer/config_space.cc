#include "optimizer/config_space.h"

#include <algorithm>
#include <map>

#include "mig/layout_enumerator.h"

namespace migserve::optimizer {

ConfigSpace::ConfigSpace(const Problem& problem)
    : problem_(problem), groups_of_(problem.num_services()) {
  multisets_ =
      mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, &layouts_);
  for (const mig::Layout& layout : layouts_) {
    const auto& instances = layout.instances();
    std::vector<int> order(instances.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return problem.gpu.profiles[instances[x].profile].compute_slices >
             problem.gpu.profiles[instances[y].profile].compute_slices;
    });
    by_size_.push_back(std::move(order));
  }
  int n = problem.num_services();
  best_single_.assign(n, 0.0);
  for (int a = 0; a < n; ++a) {
    AddGroup(a, deployment::kIdle);
    for (int k = groups_.back().begin; k < groups_.back().end; ++k) {
      best_single_[a] = std::max(best_single_[a], configs_[k].utility_a);
    }
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) AddGroup(a, b);
  }
}

void ConfigSpace::AddGroup(int a, int b) {
  const workload::CapacityMatrix& caps = problem_.caps;
  const int num_profiles = static_cast<int>(problem_.gpu.profiles.size());
  Group group{a, b, static_cast<int>(configs_.size()), 0, 0, 0};
  for (size_t m = 0; m < multisets_.size(); ++m) {
    const mig::Multiset& counts = multisets_[m];
    // Odometer over to_a[p] in [0, counts[p]], only where a can run p.
    std::array<uint8_t, kMaxProfiles> to_a{};
    std::array<uint8_t, kMaxProfiles> limit{};
    for (int p = 0; p < num_profiles; ++p) {
      limit[p] = caps.throughput(a, p) > 0 ? counts[p] : 0;
    }
    while (true) {
      PairConfig c;
      c.a = a;
      c.b = b;
      c.multiset = static_cast<int>(m);
      c.to_a = to_a;
      bool b_serves = false;
      for (int p = 0; p < num_profiles; ++p) {
        c.utility_a += to_a[p] * caps.utility(a, p);
        if (b != deployment::kIdle && counts[p] > to_a[p] &&
            caps.throughput(b, p) > 0) {
          c.utility_b += (counts[p] - to_a[p]) * caps.utility(b, p);
          b_serves = true;
        }
      }
      // A pair config must use both services; a's configs alone must use
      // a. Without b, only the config giving a every instance it can use is
      // kept: fewer instances on a maximal layout only idle them.
      bool keep = c.utility_a > 0 &&
                  (b == deployment::kIdle ? to_a == limit : b_serves);
      if (keep) configs_.push_back(c);
      int p = 0;
      while (p < num_profiles && to_a[p] == limit[p]) to_a[p++] = 0;
      if (p == num_profiles) break;
      ++to_a[p];
    }
  }
  group.end = static_cast<int>(configs_.size());
  if (group.end == group.begin) return;
  group.front_begin = static_cast<int>(front_.size());
  for (int k = group.begin; k < group.end; ++k) {
    const PairConfig& c = configs_[k];
    bool beaten = std::any_of(
        front_.begin() + group.front_begin, front_.end(), [&](const Front& f) {
          return f.utility_a >= c.utility_a && f.utility_b >= c.utility_b;
        });
    if (!beaten) front_.push_back({c.utility_a, c.utility_b, k});
  }
  group.front_end = static_cast<int>(front_.size());
  int id = static_cast<int>(groups_.size());
  groups_.push_back(group);
  groups_of_[a].push_back(id);
  if (b != deployment::kIdle) groups_of_[b].push_back(id);
}

deployment::GpuConfig ConfigSpace::Expand(const PairConfig& c) const {
  const mig::Layout& layout = layouts_[c.multiset];
  deployment::GpuConfig out{layout, {}};
  std::array<int, kMaxProfiles> given{};
  for (const mig::Instance& i : layout.instances()) {
    int p = i.profile;
    int s = deployment::kIdle;
    if (given[p] < c.to_a[p]) {
      s = c.a;
      ++given[p];
    } else if (c.b != deployment::kIdle &&
               problem_.caps.throughput(c.b, p) > 0) {
      s = c.b;
    }
    out.services.push_back(s);
  }
  return out;
}

double ScoreGpuConfig(const deployment::GpuConfig& config,
                      const workload::CapacityMatrix& caps,
                      const deployment::CompletionRates& rates,
                      const ScoreRule& rule) {
  std::map<int, double> utility;
  const auto& instances = config.layout.instances();
  for (size_t k = 0; k < instances.size(); ++k) {
    int s = config.services[k];
    if (s != deployment::kIdle) {
      utility[s] += caps.utility(s, instances[k].profile);
    }
  }
  double score = 0;
  for (const auto& [s, u] : utility) score += rule.Term(rates[s], u);
  return score;
}

}  // namespace migserve::optimizer
