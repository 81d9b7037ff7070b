#include "optimizer/brute_force.h"

#include <map>
#include <utility>
#include <vector>

#include "mig/layout_enumerator.h"
#include "workload/relaxed_bound.h"

namespace migserve::optimizer {
namespace {

class Oracle {
 public:
  explicit Oracle(const Problem& problem) : problem_(problem) {
    multisets_ =
        mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, nullptr);
  }

  int Solve(int max_gpus) {
    int lower =
        workload::CeilGpus(workload::RelaxedBound(problem_.caps, problem_.gpu));
    for (int n = std::max(1, lower); n <= max_gpus; ++n) {
      std::vector<int> counts(problem_.gpu.profiles.size(), 0);
      if (TryMultisets(n, 0, &counts)) return n;
    }
    return -1;
  }

 private:
  // Chooses `left` more layouts among multisets_[from..], with repetition.
  bool TryMultisets(int left, size_t from, std::vector<int>* counts) {
    if (left == 0) {
      memo_.clear();
      return Split(0, *counts);
    }
    for (size_t m = from; m < multisets_.size(); ++m) {
      for (size_t p = 0; p < counts->size(); ++p) {
        (*counts)[p] += multisets_[m][p];
      }
      bool ok = TryMultisets(left - 1, m, counts);
      for (size_t p = 0; p < counts->size(); ++p) {
        (*counts)[p] -= multisets_[m][p];
      }
      if (ok) return true;
    }
    return false;
  }

  // Can services j.. be served by the instances `left`?
  bool Split(int j, const std::vector<int>& left) {
    if (j == problem_.num_services()) return true;
    auto key = std::make_pair(j, left);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::vector<int> take(left.size(), 0);
    bool ok = Take(j, 0, 0.0, left, &take);
    memo_.emplace(std::move(key), ok);
    return ok;
  }

  // Chooses how many instances of profiles q.. service j takes; `have` is
  // the completion so far. Stops adding as soon as j is served.
  bool Take(int j, size_t q, double have, const std::vector<int>& left,
            std::vector<int>* take) {
    if (have >= 1.0 - 1e-9) {
      std::vector<int> rest = left;
      for (size_t p = 0; p < rest.size(); ++p) rest[p] -= (*take)[p];
      return Split(j + 1, rest);
    }
    if (q == left.size()) return false;
    double reachable = have;
    for (size_t p = q; p < left.size(); ++p) {
      reachable += left[p] * problem_.caps.utility(j, static_cast<int>(p));
    }
    if (reachable < 1.0 - 1e-9) return false;
    double u = problem_.caps.utility(j, static_cast<int>(q));
    int most = u > 0 ? left[q] : 0;
    for (int k = 0; k <= most; ++k) {
      (*take)[q] = k;
      if (Take(j, q + 1, have + k * u, left, take)) {
        (*take)[q] = 0;
        return true;
      }
    }
    (*take)[q] = 0;
    return false;
  }

  const Problem& problem_;
  std::vector<mig::Multiset> multisets_;
  std::map<std::pair<int, std::vector<int>>, bool> memo_;
};

}  // namespace

int BruteForceOptimum(const Problem& problem, int max_gpus) {
  return Oracle(problem).Solve(max_gpus);
}

}  // namespace migserve::optimizer
