// The greedy's pick among the groups of at most two services: the group
// whose best config scores highest under the current rates, the lowest
// group among equals (ConfigSpace::BestConfig scores one group).
//
// There are n^2/2 groups, and each pick changes the score of every group
// holding a service it serves. But a config's score is a sum of one term
// per service, and services of one class share their configs: over the
// groups of classes ca and cb, the best score of a config is the best term
// of a service of ca for its share plus the best of cb for its own. So the
// search keeps, per class and share, the two best terms, and per pair of
// classes the best score over its groups, in a heap: a pick changes the
// terms of its services' classes only, and the scores of the pairs of
// classes holding them. Scores only fall as rates rise, so a changed pair
// keeps its old score in the heap as a bound, marked stale, and is
// rescored only when that bound reaches the top. The group is then found
// among the services of the top pairs of classes. Picks are the same, bit
// for bit, as scoring every group: a sum of two terms is the same double in
// either order, and a larger term never makes a smaller sum.
#ifndef MIGSERVE_OPTIMIZER_HEURISTIC_TOP_GROUP_H_
#define MIGSERVE_OPTIMIZER_HEURISTIC_TOP_GROUP_H_

#include <utility>
#include <vector>

#include "deployment/gpu_config.h"
#include "optimizer/heuristic/config_space.h"
#include "optimizer/options.h"

namespace migserve::optimizer {

class TopGroup {
 public:
  // Reads `rates` at each Find; the caller says which services' rates
  // changed in between (Changed). `space`, `rates` and `rule` are not
  // copied: they outlive the group.
  TopGroup(const ConfigSpace& space, const deployment::CompletionRates& rates,
           const ScoreRule& rule);

  // The group whose best config scores highest (the lowest group among
  // equals), that score in `score`; -1 (score 0) when none scores above 0.
  int Find(double* score);

  // Service s's rate has risen since the last Find.
  void Changed(int s);

 private:
  // The two best terms for one share among a class's services (-1: none
  // yet), and whose.
  struct Best {
    double first = -1;
    int first_service = -1;
    double second = -1;
  };

  // Pairs of classes, numbered as the config space's fronts: ca * (C + 1)
  // + cb, ca <= cb, cb == C for ca alone.
  int KeyOf(int ca, int cb) const { return ca * (num_classes_ + 1) + cb; }
  void Recount(int c);
  // Rescores the pair of classes at the top of the heap.
  void RescoreTop();
  // The best score over the groups of classes ca and cb (cb == C: ca
  // alone), from the terms; in the heap, a bound once its terms fall.
  double Bound(int ca, int cb) const;
  // The lowest group of `key`'s classes whose best config scores `score`,
  // or -1.
  int LowestScoring(int key, double score) const;

  const ConfigSpace& space_;
  const deployment::CompletionRates& rates_;
  const ScoreRule& rule_;
  int num_classes_ = 0;
  std::vector<std::vector<int>> members_;  // per class, in service order
  std::vector<std::vector<Best>> best_;    // per class, per share
  std::vector<char> recount_;              // per class
  std::vector<int> to_recount_;
  std::vector<char> stale_;  // per key
  // A max-heap of (bound, key), one entry per key whose bound is above 0.
  using Entry = std::pair<double, int>;
  std::vector<Entry> heap_;
};

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_HEURISTIC_TOP_GROUP_H_
