#include "optimizer/greedy_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "optimizer/top_group.h"
#include "util/tolerance.h"

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

// For each profile, the services an instance of it would gain the most
// for, alone on a config (gain Term(rate, utility) > 0), best first and the
// lowest service first among equals; only as many as a GPU has instances,
// since a config's own services are the only others FillOpenInstances must
// weigh. Built once per set of rates: filling an instance then costs the
// config's services, not every service.
class FreshGains {
 public:
  FreshGains(const ConfigSpace& space, const CompletionRates& rates,
             const ScoreRule& rule) {
    const workload::CapacityMatrix& caps = space.problem().caps;
    const mig::GpuModel& gpu = space.problem().gpu;
    depth_ = 1;
    for (const mig::Layout& layout : space.layouts()) {
      depth_ = std::max(depth_, static_cast<int>(layout.size()) + 1);
    }
    top_.resize(gpu.profiles.size());
    for (int s = 0; s < caps.num_services(); ++s) {
      if (rates[s] >= 1.0) continue;
      for (size_t p = 0; p < gpu.profiles.size(); ++p) {
        double u = caps.utility(s, static_cast<int>(p));
        if (u <= 0) continue;
        double gain = rule.Term(rates[s], u);
        if (gain > 0) Offer(&top_[p], {gain, s});
      }
    }
  }

  // The largest gain of an instance of `profile` for any one service: with
  // Term concave in the utility and 0 at 0, no instance of the profile adds
  // more to any config's score.
  double Largest(int profile) const {
    return top_[profile].empty() ? 0 : top_[profile].front().first;
  }

  // The best service for an instance of `profile` outside `taken` (sorted),
  // or kIdle; its gain in `gain`.
  int Best(int profile, const std::vector<int>& taken, double* gain) const {
    for (const auto& [g, s] : top_[profile]) {
      if (std::binary_search(taken.begin(), taken.end(), s)) continue;
      *gain = g;
      return s;
    }
    *gain = 0;
    return kIdle;
  }

 private:
  using Entry = std::pair<double, int>;  // gain, service

  void Offer(std::vector<Entry>* top, Entry e) const {
    auto after = [](const Entry& x, const Entry& y) {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    };
    if (static_cast<int>(top->size()) == depth_ && !after(e, top->back())) {
      return;
    }
    top->insert(std::upper_bound(top->begin(), top->end(), e, after), e);
    if (static_cast<int>(top->size()) > depth_) top->pop_back();
  }

  int depth_;
  std::vector<std::vector<Entry>> top_;
};

// Fills the idle instances of a config, the largest first, each with the
// service of the largest score gain (the lowest service among equals), and
// scores it; the scratch it needs is allocated once per BestMixMore.
class Filler {
 public:
  Filler(const ConfigSpace& space, const CompletionRates& rates,
         const ScoreRule& rule)
      : space_(space),
        rates_(rates),
        rule_(rule),
        fresh_(space, rates, rule),
        added_(space.problem().num_services(), 0.0) {
    for (const mig::Layout& layout : space.layouts()) {
      double sum = 0;
      double least = 1e300;
      for (const mig::Instance& i : layout.instances()) {
        sum += fresh_.Largest(i.profile);
        least = std::min(least, fresh_.Largest(i.profile));
      }
      others_.push_back(layout.instances().empty() ? 0 : sum - least);
      others_best_ = std::max(others_best_, others_.back());
    }
  }

  // An upper bound on what the other services add to any config of
  // multiset `m` where some service holds at least one instance: the
  // largest gains of all its instances but the least of them; and the
  // largest of those over every multiset.
  double OthersBound(size_t m) const { return others_[m]; }
  double OthersBest() const { return others_best_; }

  // An upper bound on the score Fill would return for `services` on
  // multiset `m`'s layout, where only `service` holds instances, `utility`
  // of it.
  double Bound(size_t m, const std::vector<int>& services, int service,
               double utility) const {
    double bound = rule_.Term(rates_[service], utility);
    const auto& instances = space_.layouts()[m].instances();
    for (size_t k = 0; k < instances.size(); ++k) {
      if (services[k] == kIdle) bound += fresh_.Largest(instances[k].profile);
    }
    return bound;
  }

  // Fills the kIdle entries of `services` on multiset `m`'s layout and
  // returns the config's score.
  double Fill(size_t m, std::vector<int>* services) {
    const workload::CapacityMatrix& caps = space_.problem().caps;
    const auto& instances = space_.layouts()[m].instances();
    mine_.clear();
    for (size_t k = 0; k < instances.size(); ++k) {
      int s = (*services)[k];
      if (s != kIdle) Add(s, caps.utility(s, instances[k].profile));
    }
    for (int k : space_.by_size(m)) {
      if ((*services)[k] != kIdle) continue;
      int p = instances[k].profile;
      double best_gain;
      int best = fresh_.Best(p, mine_, &best_gain);
      for (int s : mine_) {
        double u = caps.utility(s, p);
        if (u <= 0 || rates_[s] >= 1.0) continue;
        double gain = rule_.Term(rates_[s], added_[s] + u) -
                      rule_.Term(rates_[s], added_[s]);
        if (gain > best_gain || (gain == best_gain && gain > 0 && s < best)) {
          best_gain = gain;
          best = s;
        }
      }
      (*services)[k] = best;
      if (best != kIdle) Add(best, caps.utility(best, p));
    }
    // The sum over every service in order, of which only the config's are
    // not zero.
    double score = 0;
    for (int s : mine_) {
      score += rule_.Term(rates_[s], added_[s]);
      added_[s] = 0;
    }
    return score;
  }

 private:
  void Add(int s, double u) {
    auto at = std::lower_bound(mine_.begin(), mine_.end(), s);
    if (at == mine_.end() || *at != s) mine_.insert(at, s);
    added_[s] += u;
  }

  const ConfigSpace& space_;
  const CompletionRates& rates_;
  const ScoreRule& rule_;
  FreshGains fresh_;
  std::vector<double> others_;  // OthersBound, per multiset
  double others_best_ = 0;
  std::vector<double> added_;  // utility per service, in Fill
  std::vector<int> mine_;      // the config's services, sorted
};

}  // namespace

GpuConfig BestMixMore(const ConfigSpace& space, const CompletionRates& rates,
                      const GreedyOptions& options,
                      const std::vector<int>& services, double* score) {
  const workload::CapacityMatrix& caps = space.problem().caps;
  const int num_profiles =
      static_cast<int>(space.problem().gpu.profiles.size());
  GpuConfig best;
  std::optional<Filler> filler;
  std::vector<int> assigned;
  // Bounds that skip a service, or a multiset for it, whole: no share of
  // s scores above s taking every instance it can run (Term grows with the
  // utility), and the others add at most OthersBound (the margin covers
  // rounding, as the per-share bound's does).
  auto beaten = [&](double bound) {
    return bound * (1 + kRoundingTolerance) < *score;
  };
  for (int s : services) {
    if (!AlmostSatisfied(space, rates, options, s)) continue;
    if (!filler) filler.emplace(space, rates, options.score);
    if (beaten(options.score.Term(rates[s], space.best_single(s)) +
               filler->OthersBest())) {
      continue;
    }
    double missing = 1.0 - rates[s];
    std::array<double, kMaxProfiles> utility{};
    for (int p = 0; p < num_profiles; ++p) utility[p] = caps.utility(s, p);
    for (size_t m = 0; m < space.multisets().size(); ++m) {
      const mig::Multiset& counts = space.multisets()[m];
      const mig::Layout& layout = space.layouts()[m];
      std::array<int, kMaxProfiles> take{};
      std::array<int, kMaxProfiles> limit{};
      double smallest = 1e300;
      double all = 0;  // s's utility of every instance it can run here
      for (int p = 0; p < num_profiles; ++p) {
        limit[p] = caps.throughput(s, p) > 0 ? counts[p] : 0;
        if (limit[p] > 0) smallest = std::min(smallest, utility[p]);
        all += limit[p] * utility[p];
      }
      if (beaten(options.score.Term(rates[s], all) + filler->OthersBound(m))) {
        continue;
      }
      // Every non-empty share for s that overshoots what s misses by less
      // than one instance; the rest of the GPU goes to other services.
      while (true) {
        int p = 0;
        while (p < num_profiles && take[p] == limit[p]) take[p++] = 0;
        if (p == num_profiles) break;
        ++take[p];
        double u = 0;
        for (int q = 0; q < num_profiles; ++q) u += take[q] * utility[q];
        if (u - smallest >= missing) {
          // So does every share with at least these instances (each term
          // of the sum only grows): those that follow in this order until
          // the lowest profile taken here carries over.
          for (int q = 0; q < num_profiles; ++q) {
            bool lowest = take[q] > 0;
            take[q] = limit[q];
            if (lowest) break;
          }
          continue;
        }
        assigned.assign(layout.size(), kIdle);
        std::array<int, kMaxProfiles> given{};
        const auto& instances = layout.instances();
        for (size_t k = 0; k < instances.size(); ++k) {
          int q = instances[k].profile;
          if (given[q] < take[q]) {
            ++given[q];
            assigned[k] = s;
          }
        }
        // Skip what cannot beat the best (the margin covers rounding).
        if (filler->Bound(m, assigned, s, u) * (1 + kRoundingTolerance) <
            *score) {
          continue;
        }
        double sc = filler->Fill(m, &assigned);
        if (sc > *score) {
          *score = sc;
          best = GpuConfig{layout, assigned};
        }
      }
    }
  }
  return best;
}

std::vector<GpuConfig> Greedy(const ConfigSpace& space,
                              const CompletionRates& initial,
                              const GreedyOptions& options) {
  return *GreedyUntil(space, initial, options, Clock::time_point::max());
}

std::optional<std::vector<GpuConfig>> GreedyUntil(
    const ConfigSpace& space, const CompletionRates& initial,
    const GreedyOptions& options, Clock::time_point deadline) {
  const bool limited = deadline != Clock::time_point::max();
  const int n = space.problem().num_services();
  const ScoreRule& rule = options.score;
  CompletionRates rates = initial;
  TopGroup top(space, rates, rule);
  std::vector<int> all(n);
  for (int s = 0; s < n; ++s) all[s] = s;

  std::vector<GpuConfig> out;
  while (!deployment::AllSatisfied(rates)) {
    if (limited && SecondsLeft(deadline) <= 0) return std::nullopt;
    double pair_score;
    int group = top.Find(&pair_score);
    double mix_score = pair_score;
    GpuConfig chosen;
    if (options.mix_more) {
      chosen = BestMixMore(space, rates, options, all, &mix_score);
    }
    if (mix_score <= pair_score) {
      double score;
      int config = space.BestConfig(group, rates, rule, &score);
      chosen = space.Expand(space.Config(group, config));
    }
    for (int s : chosen.services) {
      if (s != kIdle) top.Changed(s);
    }
    deployment::AddConfig(chosen, space.problem().caps, &rates);
    out.push_back(std::move(chosen));
  }
  return out;
}

Solution GreedyOptimizer::Solve(const Problem& problem,
                                const CompletionRates& initial,
                                const SolveOptions& options) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  ConfigSpace space(problem);
  std::optional<std::vector<GpuConfig>> configs =
      GreedyUntil(space, initial, options.greedy, deadline);
  if (!configs) {
    return Infeasible(
        Interrupted()
            ? std::string("greedy: interrupted before every service was "
                          "served; it has no deployment to keep")
            : fmt::format("greedy: --time-limit {} s ended the search before "
                          "every service was served; raise --time-limit",
                          options.time_limit_s));
  }
  Solution solution;
  solution.configs = std::move(*configs);
  return solution;
}

}  // namespace migserve::optimizer
