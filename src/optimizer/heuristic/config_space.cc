#include "optimizer/heuristic/config_space.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>

#include "mig/layout_enumerator.h"

namespace migserve::optimizer {

ConfigSpace::ConfigSpace(const Problem& problem) : problem_(problem) {
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
  const int n = problem.num_services();
  const int num_profiles = static_cast<int>(problem.gpu.profiles.size());
  num_groups_ = n;
  for (int a = 0; a < n; ++a) {
    pair_start_.push_back(num_groups_);
    num_groups_ += n - 1 - a;
  }
  std::map<std::vector<double>, int> classes;
  std::map<std::array<bool, kMaxProfiles>, int> masks;
  for (int s = 0; s < n; ++s) {
    std::vector<double> throughput(num_profiles);
    std::array<bool, kMaxProfiles> runs{};
    for (int p = 0; p < num_profiles; ++p) {
      throughput[p] = problem.caps.throughput(s, p);
      runs[p] = throughput[p] > 0;
    }
    auto [c, new_class] = classes.emplace(std::move(throughput), num_classes_);
    if (new_class) {
      ++num_classes_;
      representative_.push_back(s);
    }
    class_of_.push_back(c->second);
    auto [m, new_mask] = masks.emplace(runs, num_masks_);
    if (new_mask) {
      ++num_masks_;
      runs_.push_back(runs);
    }
    mask_of_.push_back(m->second);
  }
  shares_.resize(num_masks_);
  for (int ma = 0; ma < num_masks_; ++ma) {
    for (int mb = 0; mb <= num_masks_; ++mb) AddConfigs(ma, mb);
  }
  // Each class's throughput of each of its shares.
  std::vector<std::vector<double>> share_throughput(num_classes_);
  for (int c = 0; c < num_classes_; ++c) {
    const int s = representative_[c];
    for (size_t k = 0; k < shares_[mask_of_[s]].size(); ++k) {
      share_throughput[c].push_back(
          ShareSum(s, static_cast<int>(k),
                   [&](int p) { return problem.caps.throughput(s, p); }));
    }
  }
  for (int ca = 0; ca < num_classes_; ++ca) {
    for (int cb = 0; cb <= num_classes_; ++cb) {
      AddFront(ca, cb, share_throughput);
    }
  }
  best_single_.assign(n, 0.0);
  for (int s = 0; s < n; ++s) {
    std::vector<double>& utility = share_utility_.emplace_back();
    for (size_t k = 0; k < shares_[mask_of_[s]].size(); ++k) {
      utility.push_back(ShareSum(s, static_cast<int>(k), [&](int p) {
        return problem.caps.utility(s, p);
      }));
    }
    const Range& alone = config_tables_[ConfigTableOf(s, deployment::kIdle)];
    for (int id = alone.begin; id < alone.end; ++id) {
      best_single_[s] =
          std::max(best_single_[s], utility[configs_[id].share_a]);
    }
  }
}

std::pair<int, int> ConfigSpace::group_services(int g) const {
  if (g < problem_.num_services()) return {g, deployment::kIdle};
  int a = static_cast<int>(
              std::upper_bound(pair_start_.begin(), pair_start_.end(), g) -
              pair_start_.begin()) -
          1;
  return {a, a + 1 + (g - pair_start_[a])};
}

int ConfigSpace::ShareOf(int mask,
                         const std::array<uint8_t, kMaxProfiles>& share) {
  auto& shares = shares_[mask];
  auto at = std::find(shares.begin(), shares.end(), share);
  if (at != shares.end()) return static_cast<int>(at - shares.begin());
  shares.push_back(share);
  assert(shares.size() <= INT16_MAX);
  return static_cast<int>(shares.size()) - 1;
}

void ConfigSpace::AddConfigs(int ma, int mb) {
  const int num_profiles = static_cast<int>(problem_.gpu.profiles.size());
  const bool alone = mb == num_masks_;
  Range& table = config_tables_.emplace_back();
  table.begin = static_cast<int>(configs_.size());
  for (size_t m = 0; m < multisets_.size(); ++m) {
    const mig::Multiset& counts = multisets_[m];
    // Odometer over to_a[p] in [0, counts[p]], only where a can run p.
    std::array<uint8_t, kMaxProfiles> to_a{};
    std::array<uint8_t, kMaxProfiles> limit{};
    for (int p = 0; p < num_profiles; ++p) {
      limit[p] = runs_[ma][p] ? counts[p] : 0;
    }
    while (true) {
      std::array<uint8_t, kMaxProfiles> to_b{};
      bool a_serves = false;
      bool b_serves = false;
      for (int p = 0; p < num_profiles; ++p) {
        a_serves = a_serves || to_a[p] > 0;
        if (!alone && counts[p] > to_a[p] && runs_[mb][p]) {
          to_b[p] = static_cast<uint8_t>(counts[p] - to_a[p]);
          b_serves = true;
        }
      }
      // A pair config must use both services; a's configs alone must use
      // a. Without b, only the config giving a every instance it can use is
      // kept: fewer instances on a maximal layout only idle them.
      if (a_serves && (alone ? to_a == limit : b_serves)) {
        configs_.push_back({static_cast<int>(m), to_a, ShareOf(ma, to_a),
                            alone ? -1 : ShareOf(mb, to_b)});
      }
      int p = 0;
      while (p < num_profiles && to_a[p] == limit[p]) to_a[p++] = 0;
      if (p == num_profiles) break;
      ++to_a[p];
    }
  }
  table.end = static_cast<int>(configs_.size());
}

void ConfigSpace::AddFront(
    int ca, int cb, const std::vector<std::vector<double>>& share_throughput) {
  const int a = representative_[ca];
  const int b = cb == num_classes_ ? deployment::kIdle : representative_[cb];
  const Range& configs = config_tables_[ConfigTableOf(a, b)];
  // Each config's throughput for a and for b.
  std::vector<std::pair<double, double>> served;
  for (int id = configs.begin; id < configs.end; ++id) {
    const ClassConfig& c = configs_[id];
    served.emplace_back(
        share_throughput[ca][c.share_a],
        b == deployment::kIdle ? 0 : share_throughput[cb][c.share_b]);
  }
  // A config joins unless an earlier one beats it on each side, by the
  // same share or by a throughput margin far above rounding, so that it
  // matches or beats it in each service's utility too (a utility is the
  // throughput over the service's required rate, summed per service). At
  // worst the front keeps a config the utilities would drop, which never
  // scores higher than the one that beats it.
  constexpr double kMargin = 1e-9;
  Range& table = front_tables_.emplace_back();
  table.begin = static_cast<int>(front_.size());
  for (int id = configs.begin; id < configs.end; ++id) {
    const ClassConfig& c = configs_[id];
    const auto [ta, tb] = served[id - configs.begin];
    bool beaten = false;
    for (int k = table.begin; k < static_cast<int>(front_.size()) && !beaten;
         ++k) {
      const auto [fa, fb] = served[front_config_[k] - configs.begin];
      beaten = (front_[k].share_a == c.share_a || fa > ta * (1 + kMargin)) &&
               (front_[k].share_b == c.share_b || fb > tb * (1 + kMargin));
    }
    if (!beaten) {
      front_.push_back(
          {static_cast<int16_t>(c.share_a), static_cast<int16_t>(c.share_b)});
      front_config_.push_back(id);
    }
  }
  table.end = static_cast<int>(front_.size());
}

int ConfigSpace::BestConfig(int g, const deployment::CompletionRates& rates,
                            const ScoreRule& rule, double* score) const {
  auto [a, b] = group_services(g);
  const Range& t = front_tables_[FrontTableOf(a, b)];
  const std::vector<double>& utility_a = share_utility_[a];
  const double rate_a = rates[a];
  const double rate_b = b == deployment::kIdle ? 1.0 : rates[b];
  const double* utility_b =
      b == deployment::kIdle ? nullptr : share_utility_[b].data();
  double best = 0;
  int arg = -1;
  for (int k = t.begin; k < t.end; ++k) {
    const Front& f = front_[k];
    // Score's sum: rule.Term is 0 at rate 1.
    double sc = rule.Term(rate_a, utility_a[f.share_a]) +
                rule.Term(rate_b, f.share_b < 0 ? 0 : utility_b[f.share_b]);
    if (sc > best) {
      best = sc;
      arg = front_config_[k];
    }
  }
  *score = best;
  return arg;
}

PairConfig ConfigSpace::Config(int a, int b, int id) const {
  const ClassConfig& c = configs_[id];
  PairConfig out;
  out.a = a;
  out.b = b;
  out.multiset = c.multiset;
  out.to_a = c.to_a;
  out.utility_a = share_utility_[a][c.share_a];
  if (c.share_b >= 0) out.utility_b = share_utility_[b][c.share_b];
  return out;
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
