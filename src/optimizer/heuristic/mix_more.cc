#include "optimizer/heuristic/mix_more.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "util/tolerance.h"

namespace migserve::optimizer {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

// For each profile, the services an instance of it would gain for, alone
// on a config (gain Term(rate, utility) > 0), the most first and the lowest
// service first among equals. Kept service by service as rates change:
// filling an instance then costs the config's services, not every service.
class FreshGains {
 public:
  FreshGains(const ConfigSpace& space, const ScoreRule& rule)
      : caps_(space.problem().caps),
        rule_(rule),
        num_profiles_(static_cast<int>(space.problem().gpu.profiles.size())),
        by_profile_(num_profiles_),
        gain_(caps_.num_services()) {}

  // Service s's rate is now `rate`.
  void Set(int s, double rate) {
    for (int p = 0; p < num_profiles_; ++p) {
      double u = caps_.utility(s, p);
      double gain = rate < 1.0 && u > 0 ? rule_.Term(rate, u) : 0;
      double& kept = gain_[s][p];
      if (gain == kept) continue;
      if (kept > 0) by_profile_[p].erase({kept, s});
      if (gain > 0) by_profile_[p].insert({gain, s});
      kept = gain;
    }
  }

  // The largest gain of an instance of `profile` for any one service: with
  // Term concave in the utility and 0 at 0, no instance of the profile adds
  // more to any config's score.
  double Largest(int profile) const {
    return by_profile_[profile].empty() ? 0
                                        : by_profile_[profile].begin()->first;
  }

  // The best service for an instance of `profile` outside `taken` (sorted),
  // or kIdle; its gain in `gain`.
  int Best(int profile, const std::vector<int>& taken, double* gain) const {
    for (const auto& [g, s] : by_profile_[profile]) {
      if (std::binary_search(taken.begin(), taken.end(), s)) continue;
      *gain = g;
      return s;
    }
    *gain = 0;
    return kIdle;
  }

 private:
  using Entry = std::pair<double, int>;  // gain, service
  struct After {
    bool operator()(const Entry& x, const Entry& y) const {
      return x.first > y.first || (x.first == y.first && x.second < y.second);
    }
  };

  const workload::CapacityMatrix& caps_;
  const ScoreRule& rule_;
  int num_profiles_;
  std::vector<std::set<Entry, After>> by_profile_;
  std::vector<std::array<double, kMaxProfiles>> gain_;  // as by_profile_ has
};

namespace {

bool AlmostSatisfied(const ConfigSpace& space, const CompletionRates& rates,
                     const GreedyOptions& options, int s) {
  return !deployment::Satisfied(rates[s]) &&
         1.0 - rates[s] <= options.almost_satisfied * space.best_single(s);
}

// Fills the idle instances of a config, the largest first, each with the
// service of the largest score gain (the lowest service among equals), and
// scores it; the scratch it needs is allocated once per search.
class Filler {
 public:
  Filler(const ConfigSpace& space, const CompletionRates& rates,
         const ScoreRule& rule, const FreshGains& fresh)
      : space_(space),
        rates_(rates),
        rule_(rule),
        fresh_(fresh),
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
  const FreshGains& fresh_;
  std::vector<double> others_;  // OthersBound, per multiset
  double others_best_ = 0;
  std::vector<double> added_;  // utility per service, in Fill
  std::vector<int> mine_;      // the config's services, sorted
};

}  // namespace

MixMoreSearch::MixMoreSearch(const ConfigSpace& space,
                             const GreedyOptions& options)
    : space_(space),
      options_(options),
      fresh_(std::make_unique<FreshGains>(space, options.score)),
      seen_(space.problem().num_services(),
            std::numeric_limits<double>::quiet_NaN()),
      bound_(space.problem().num_services(),
             std::numeric_limits<double>::infinity()) {}

MixMoreSearch::~MixMoreSearch() = default;

GpuConfig MixMoreSearch::Best(const CompletionRates& rates,
                              const std::vector<int>& services, double* score) {
  const workload::CapacityMatrix& caps = space_.problem().caps;
  const ScoreRule& rule = options_.score;
  const int num_profiles =
      static_cast<int>(space_.problem().gpu.profiles.size());
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
    if (!AlmostSatisfied(space_, rates, options_, s)) continue;
    if (beaten(bound_[s])) continue;
    if (!filler) {
      for (size_t t = 0; t < rates.size(); ++t) {
        if (rates[t] == seen_[t]) continue;
        fresh_->Set(static_cast<int>(t), rates[t]);
        seen_[t] = rates[t];
      }
      filler.emplace(space_, rates, rule, *fresh_);
    }
    bound_[s] =
        rule.Term(rates[s], space_.best_single(s)) + filler->OthersBest();
    if (beaten(bound_[s])) continue;
    double bound = 0;  // the largest of the bounds below
    double missing = 1.0 - rates[s];
    std::array<double, kMaxProfiles> utility{};
    for (int p = 0; p < num_profiles; ++p) utility[p] = caps.utility(s, p);
    for (size_t m = 0; m < space_.multisets().size(); ++m) {
      const mig::Multiset& counts = space_.multisets()[m];
      const mig::Layout& layout = space_.layouts()[m];
      std::array<int, kMaxProfiles> take{};
      std::array<int, kMaxProfiles> limit{};
      double smallest = 1e300;
      double all = 0;  // s's utility of every instance it can run here
      for (int p = 0; p < num_profiles; ++p) {
        limit[p] = caps.throughput(s, p) > 0 ? counts[p] : 0;
        if (limit[p] > 0) smallest = std::min(smallest, utility[p]);
        all += limit[p] * utility[p];
      }
      double whole = rule.Term(rates[s], all) + filler->OthersBound(m);
      if (beaten(whole)) {
        bound = std::max(bound, whole);
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
          // the lowest profile taken here carries over. A share left out
          // stays out: what s misses only shrinks.
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
        double share = filler->Bound(m, assigned, s, u);
        bound = std::max(bound, share);
        // Skip what cannot beat the best (the margin covers rounding).
        if (beaten(share)) continue;
        double sc = filler->Fill(m, &assigned);
        if (sc > *score) {
          *score = sc;
          best = GpuConfig{layout, assigned};
        }
      }
    }
    bound_[s] = bound;
  }
  return best;
}

GpuConfig BestMixMore(const ConfigSpace& space, const CompletionRates& rates,
                      const GreedyOptions& options,
                      const std::vector<int>& services, double* score) {
  return MixMoreSearch(space, options).Best(rates, services, score);
}

}  // namespace migserve::optimizer
