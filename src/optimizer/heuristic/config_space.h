// The GPU configs the paper's algorithms choose from (Appendix A): over the
// distinct maximal layouts (placement does not change a config's utility),
// every config that mixes at most two services.
//
// Which configs a group (a service alone, or a pair) has depends only on
// the profiles each of its services can run, and which of them can score
// highest only on its services' classes: services with the same credited
// throughput on every profile. So the configs are built once per pair of
// profile sets, as shares of a layout, each service keeps its utility of
// each share it can take, and the configs that can score highest are
// listed once per pair of classes. Memory grows with the services and
// with the square of the classes (a model at a latency SLO, and under the
// p99 credits its rate over an instance's, up to 64 instances' worth), not
// with the pairs of services; a group's configs are produced when a step
// asks for them.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_CONFIG_SPACE_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_CONFIG_SPACE_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "deployment/gpu_config.h"
#include "mig/layout_enumerator.h"
#include "optimizer/options.h"
#include "optimizer/problem.h"

namespace migserve::optimizer {

using mig::kMaxProfiles;

// A config mixing services `a` and `b` (b == kIdle: `a` alone) on the
// representative layout of `multiset`: `to_a[p]` instances of profile p
// serve a, the others serve b where b can run there, else stay idle.
struct PairConfig {
  int a = 0;
  int b = deployment::kIdle;
  int multiset = 0;
  std::array<uint8_t, kMaxProfiles> to_a{};
  double utility_a = 0;
  double utility_b = 0;
};

class ConfigSpace {
 public:
  // `problem` is not copied: it outlives the space.
  explicit ConfigSpace(const Problem& problem);

  const Problem& problem() const { return problem_; }
  // Distinct maximal multisets and one placed layout of each.
  const std::vector<mig::Multiset>& multisets() const { return multisets_; }
  const std::vector<mig::Layout>& layouts() const { return layouts_; }
  // Layout m's instance indices, the largest (compute slices) first, in
  // layout order among equals.
  const std::vector<int>& by_size(size_t m) const { return by_size_[m]; }

  // Services with the same credited throughput on every profile; they run
  // the same profiles, so they share their shares (numbered alike).
  int num_classes() const { return num_classes_; }
  int class_of(int s) const { return class_of_[s]; }

  // Service s's shares of the layouts' instances, and its utility of each.
  int num_shares(int s) const {
    return static_cast<int>(share_utility_[s].size());
  }
  double share_utility(int s, int share) const {
    return share_utility_[s][share];
  }

  // Calls fn(share_a, share_b) for each config of the front of classes ca
  // and cb, in front order: the configs BestConfig scores for a group of a
  // service of ca and one of cb, in that order. cb == num_classes(): ca
  // alone, share_b -1; a pair's configs use both services.
  template <typename Fn>
  void ForEachFront(int ca, int cb, Fn fn) const {
    const Range& t = front_tables_[FrontTableOfClasses(ca, cb)];
    for (int k = t.begin; k < t.end; ++k)
      fn(front_[k].share_a, front_[k].share_b);
  }

  // Groups, numbered: g < n is service g alone; then the pairs (a, b),
  // a < b, in order of a, then b. A group may have no config.
  int num_groups() const { return num_groups_; }
  // The services of group g: (a, kIdle) for a service alone.
  std::pair<int, int> group_services(int g) const;
  // The group of services a and b, in either order (b == kIdle: a alone).
  int GroupOf(int a, int b) const {
    if (b == deployment::kIdle) return a;
    return a < b ? PairGroup(a, b) : PairGroup(b, a);
  }

  // Calls fn(g, other) for each group g that contains service `s`, `other`
  // its other service (kIdle for s alone): s alone, then the pairs (a, s),
  // then (s, b), in group order.
  template <typename Fn>
  void ForEachGroupOf(int s, Fn fn) const {
    fn(s, deployment::kIdle);
    for (int a = 0; a < s; ++a) fn(PairGroup(a, s), a);
    const int n = problem_.num_services();
    for (int b = s + 1; b < n; ++b) fn(PairGroup(s, b), b);
  }

  // Calls fn(id, config) for each config of group g, in group order, with
  // ids that grow in that order.
  template <typename Fn>
  void ForEachConfig(int g, Fn fn) const {
    auto [a, b] = group_services(g);
    const Range& r = config_tables_[ConfigTableOf(a, b)];
    for (int id = r.begin; id < r.end; ++id) fn(id, Config(a, b, id));
  }

  // The id of the config of group g with the highest score under `rates`
  // (the first in group order among equals; -1 if none scores above 0),
  // and that score in `score`. Only the group's front is scored: the
  // configs that no earlier config of the group matches or beats in both
  // services' utilities. A score that grows with each utility
  // (ScoreRule's does, in floating point too) is highest, first reached,
  // on one of them.
  int BestConfig(int g, const deployment::CompletionRates& rates,
                 const ScoreRule& rule, double* score) const;

  // Config `id` of group g.
  PairConfig Config(int g, int id) const {
    auto [a, b] = group_services(g);
    return Config(a, b, id);
  }

  // The utility, for each service, of the best GPU config serving it alone.
  double best_single(int s) const { return best_single_[s]; }

  double Score(const PairConfig& c, const deployment::CompletionRates& rates,
               const ScoreRule& rule) const {
    double score = rule.Term(rates[c.a], c.utility_a);
    if (c.b != deployment::kIdle) score += rule.Term(rates[c.b], c.utility_b);
    return score;
  }

  // Returns `c` as a GPU config on its multiset's representative layout.
  deployment::GpuConfig Expand(const PairConfig& c) const;

 private:
  // A config of a pair of profile sets: a's share of the multiset's
  // instances and what is left to b where b can run it, each an index into
  // its profile set's shares (-1: none).
  struct ClassConfig {
    int multiset;
    std::array<uint8_t, kMaxProfiles> to_a;
    int share_a;
    int share_b;
  };
  // A config of a front: what scoring it needs, small, since the greedy
  // scores fronts at every pick; its config is in front_config_. A GPU's
  // shares number in the hundreds.
  struct Front {
    int16_t share_a;
    int16_t share_b;
  };
  struct Range {
    int begin = 0;
    int end = 0;
  };

  int PairGroup(int a, int b) const { return pair_start_[a] + (b - a - 1); }
  // The configs of a's and b's profile sets, or of a's alone (b == kIdle),
  // in config_tables_; the front of their classes in front_tables_.
  int ConfigTableOf(int a, int b) const {
    int mb = b == deployment::kIdle ? num_masks_ : mask_of_[b];
    return mask_of_[a] * (num_masks_ + 1) + mb;
  }
  int FrontTableOf(int a, int b) const {
    return FrontTableOfClasses(
        class_of_[a], b == deployment::kIdle ? num_classes_ : class_of_[b]);
  }
  int FrontTableOfClasses(int ca, int cb) const {
    return ca * (num_classes_ + 1) + cb;
  }
  PairConfig Config(int a, int b, int id) const;
  // Sum over the profiles of share `share` of service s's profile set
  // times value(p) (0 for no share).
  template <typename Value>
  double ShareSum(int s, int share, Value value) const {
    double sum = 0;
    if (share < 0) return sum;
    const auto& counts = shares_[mask_of_[s]][share];
    for (size_t p = 0; p < problem_.gpu.profiles.size(); ++p) {
      sum += counts[p] * value(static_cast<int>(p));
    }
    return sum;
  }
  void AddConfigs(int ma, int mb);
  // `share_throughput`: per class, its throughput of each of its shares.
  void AddFront(int ca, int cb,
                const std::vector<std::vector<double>>& share_throughput);
  int ShareOf(int mask, const std::array<uint8_t, kMaxProfiles>& share);

  const Problem& problem_;
  std::vector<mig::Multiset> multisets_;
  std::vector<mig::Layout> layouts_;
  std::vector<std::vector<int>> by_size_;
  int num_groups_ = 0;
  std::vector<int> pair_start_;  // group of the pair (a, a + 1), per a
  // Profile sets (the profiles a service can run), per service; for each,
  // which profiles and its shares.
  int num_masks_ = 0;
  std::vector<int> mask_of_;
  std::vector<std::array<bool, kMaxProfiles>> runs_;
  std::vector<std::vector<std::array<uint8_t, kMaxProfiles>>> shares_;
  // Classes, per service; for each, a service of it.
  int num_classes_ = 0;
  std::vector<int> class_of_;
  std::vector<int> representative_;
  std::vector<std::vector<double>> share_utility_;  // per service, share
  std::vector<ClassConfig> configs_;
  std::vector<Range> config_tables_;
  std::vector<Front> front_;
  std::vector<int> front_config_;  // per front_ entry, into configs_
  std::vector<Range> front_tables_;
  std::vector<double> best_single_;
};

// Returns the score of an explicit GPU config under `rule`.
double ScoreGpuConfig(const deployment::GpuConfig& config,
                      const workload::CapacityMatrix& caps,
                      const deployment::CompletionRates& rates,
                      const ScoreRule& rule);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_CONFIG_SPACE_H_
