#include "optimizer/testing/brute_force.h"

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "mig/layout_enumerator.h"
#include "util/tolerance.h"
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
  // the completion so far. Stops adding as soon as j is served with its
  // min_replicas.
  bool Take(int j, size_t q, double have, const std::vector<int>& left,
            std::vector<int>* take) {
    int taken = 0;
    for (int n : *take) taken += n;
    if (have >= 1.0 - kRateTolerance &&
        taken >= problem_.workload.services[j].min_replicas) {
      std::vector<int> rest = left;
      for (size_t p = 0; p < rest.size(); ++p) rest[p] -= (*take)[p];
      return Split(j + 1, rest);
    }
    if (q == left.size()) return false;
    double reachable = have;
    for (size_t p = q; p < left.size(); ++p) {
      reachable += left[p] * problem_.caps.utility(j, static_cast<int>(p));
    }
    if (reachable < 1.0 - kRateTolerance) return false;
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

// The fewest starts from a current deployment (BruteForceFewestStarts).
class StartsOracle {
 public:
  StartsOracle(const Problem& problem,
               const std::vector<milp::CurrentGpu>& current)
      : problem_(problem) {
    multisets_ =
        mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, nullptr);
    for (const milp::CurrentGpu& g : current) {
      const deployment::GpuConfig& c = g.config;
      if (c.layout.empty()) continue;
      Gpu gpu{c.layout.ProfileCounts(problem.gpu), {}};
      const auto& instances = c.layout.instances();
      for (size_t i = 0; i < instances.size(); ++i) {
        if (c.services[i] == deployment::kIdle || g.throughput[i] <= 0)
          continue;
        ++gpu.replicas[{
            c.services[i], instances[i].profile,
            g.throughput[i] / problem.caps.required(c.services[i])}];
      }
      gpus_.push_back(std::move(gpu));
    }
  }

  int Solve(int max_gpus) {
    best_ = -1;
    std::vector<int> pool(problem_.gpu.profiles.size(), 0);
    std::vector<double> have(problem_.num_services(), 0.0);
    Keep(0, max_gpus, 0, &pool, &have);
    return best_;
  }

 private:
  using Kind = std::tuple<int, int, double>;  // service, profile, utility
  struct Gpu {
    std::vector<int> counts;       // instances per profile
    std::map<Kind, int> replicas;  // kind -> how many
  };

  // Decides whether current GPU `g` (and those after it) keeps its layout,
  // and how many replicas of each kind; `used` GPUs are kept so far.
  void Keep(size_t g, int max_gpus, int used, std::vector<int>* pool,
            std::vector<double>* have) {
    if (g == gpus_.size()) {
      NewGpus(max_gpus - used, 0, pool, *have);
      return;
    }
    Keep(g + 1, max_gpus, used, pool, have);
    if (used == max_gpus) return;
    for (size_t p = 0; p < pool->size(); ++p) (*pool)[p] += gpus_[g].counts[p];
    std::vector<std::pair<Kind, int>> kinds(gpus_[g].replicas.begin(),
                                            gpus_[g].replicas.end());
    KeepReplicas(g, kinds, 0, max_gpus, used + 1, pool, have);
    for (size_t p = 0; p < pool->size(); ++p) (*pool)[p] -= gpus_[g].counts[p];
  }

  void KeepReplicas(size_t g, const std::vector<std::pair<Kind, int>>& kinds,
                    size_t kind, int max_gpus, int used, std::vector<int>* pool,
                    std::vector<double>* have) {
    if (kind == kinds.size()) {
      Keep(g + 1, max_gpus, used, pool, have);
      return;
    }
    auto [service, profile, u] = kinds[kind].first;
    for (int n = 0; n <= kinds[kind].second; ++n) {
      (*pool)[profile] -= n;
      (*have)[service] += n * u;
      KeepReplicas(g, kinds, kind + 1, max_gpus, used, pool, have);
      (*pool)[profile] += n;
      (*have)[service] -= n * u;
    }
  }

  // Adds up to `left` new GPUs of multisets_[from..] to the pool.
  void NewGpus(int left, size_t from, std::vector<int>* pool,
               const std::vector<double>& have) {
    memo_.clear();
    int starts = FewestStarts(0, *pool, have);
    if (starts >= 0 && (best_ < 0 || starts < best_)) best_ = starts;
    if (left == 0) return;
    for (size_t m = from; m < multisets_.size(); ++m) {
      for (size_t p = 0; p < pool->size(); ++p) (*pool)[p] += multisets_[m][p];
      NewGpus(left - 1, m, pool, have);
      for (size_t p = 0; p < pool->size(); ++p) (*pool)[p] -= multisets_[m][p];
    }
  }

  // The fewest instances of `pool` that serve services j.. (each missing
  // 1 - have), or -1.
  int FewestStarts(int j, const std::vector<int>& pool,
                   const std::vector<double>& have) {
    if (j == problem_.num_services()) return 0;
    auto key = std::make_pair(j, pool);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::vector<int> take(pool.size(), 0);
    int best = Take(j, 0, have[j], pool, have, &take);
    memo_.emplace(std::move(key), best);
    return best;
  }

  int Take(int j, size_t q, double rate, const std::vector<int>& pool,
           const std::vector<double>& have, std::vector<int>* take) {
    if (rate >= 1.0 - kRateTolerance) {
      std::vector<int> rest = pool;
      int taken = 0;
      for (size_t p = 0; p < rest.size(); ++p) {
        rest[p] -= (*take)[p];
        taken += (*take)[p];
      }
      int after = FewestStarts(j + 1, rest, have);
      return after < 0 ? -1 : taken + after;
    }
    if (q == pool.size()) return -1;
    double u = problem_.caps.utility(j, static_cast<int>(q));
    int most = u > 0 ? pool[q] : 0;
    int best = -1;
    for (int k = 0; k <= most; ++k) {
      (*take)[q] = k;
      int found = Take(j, q + 1, rate + k * u, pool, have, take);
      if (found >= 0 && (best < 0 || found < best)) best = found;
    }
    (*take)[q] = 0;
    return best;
  }

  const Problem& problem_;
  std::vector<mig::Multiset> multisets_;
  std::vector<Gpu> gpus_;
  std::map<std::pair<int, std::vector<int>>, int> memo_;
  int best_ = -1;
};

}  // namespace

int BruteForceFewestStarts(const Problem& problem,
                           const std::vector<milp::CurrentGpu>& current,
                           int gpus) {
  return StartsOracle(problem, current).Solve(gpus);
}

int BruteForceOptimum(const Problem& problem, int max_gpus) {
  return Oracle(problem).Solve(max_gpus);
}

}  // namespace migserve::optimizer
