// The GPU configs the paper's algorithms choose from (Appendix A): over the
// distinct maximal layouts (placement does not change a config's utility),
// every config that mixes at most two services. Stored compactly per pair of
// services so that a change to one service's completion rate rescores only
// the pairs that contain it.
#ifndef MIGSERVE_OPTIMIZER_CONFIG_SPACE_H_
#define MIGSERVE_OPTIMIZER_CONFIG_SPACE_H_

#include <array>
#include <cstdint>
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
  explicit ConfigSpace(const Problem& problem);

  const Problem& problem() const { return problem_; }
  // Distinct maximal multisets and one placed layout of each.
  const std::vector<mig::Multiset>& multisets() const { return multisets_; }
  const std::vector<mig::Layout>& layouts() const { return layouts_; }
  // Layout m's instance indices, the largest (compute slices) first, in
  // layout order among equals.
  const std::vector<int>& by_size(size_t m) const { return by_size_[m]; }

  // All pair configs; those of one group (a service alone, or a pair) are
  // contiguous.
  const std::vector<PairConfig>& configs() const { return configs_; }
  // Groups: [begin, end) ranges into configs(); [front_begin, front_end)
  // into front().
  struct Group {
    int a;
    int b;  // kIdle for a service alone
    int begin;
    int end;
    int front_begin;
    int front_end;
  };
  const std::vector<Group>& groups() const { return groups_; }
  // The configs of each group that no earlier config of the group matches
  // or beats in both utilities, in group order, with their utilities. A
  // score that grows with each utility (ScoreRule's does, in floating point
  // too) is highest, first reached, on one of them: they are all the
  // greedy needs to rescore a group, a fraction of its configs.
  struct Front {
    double utility_a;
    double utility_b;
    int config;
  };
  const std::vector<Front>& front() const { return front_; }

  // The groups that contain service `s`.
  const std::vector<int>& groups_of(int s) const { return groups_of_[s]; }

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
  void AddGroup(int a, int b);

  const Problem& problem_;
  std::vector<mig::Multiset> multisets_;
  std::vector<mig::Layout> layouts_;
  std::vector<std::vector<int>> by_size_;
  std::vector<PairConfig> configs_;
  std::vector<Group> groups_;
  std::vector<Front> front_;
  std::vector<std::vector<int>> groups_of_;
  std::vector<double> best_single_;
};

// Returns the score of an explicit GPU config under `rule`.
double ScoreGpuConfig(const deployment::GpuConfig& config,
                      const workload::CapacityMatrix& caps,
                      const deployment::CompletionRates& rates,
                      const ScoreRule& rule);

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_CONFIG_SPACE_H_
