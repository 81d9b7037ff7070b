#include "optimizer/transition_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/OsiClpSolverInterface.hpp>
#include <map>

#include "optimizer/cbc_run.h"
#include "optimizer/deadline.h"
#include "optimizer/milp/mig_model.h"
#include "optimizer/milp_optimizer.h"
#include "util/tolerance.h"

namespace migserve::optimizer {
namespace {

using deployment::GpuConfig;
using deployment::kIdle;

// A replica of the current deployment that may be kept.
struct Keepable {
  int instance;  // on its GPU
  int service;
  int profile;
  double utility;
};

// A current GPU with a layout, which the model may keep.
struct KeptGpu {
  int current;                   // index into the current GPUs
  mig::Multiset counts;          // its instances per profile
  std::vector<size_t> replicas;  // its keepable replicas
};

// The phase-2 model: the MIG part (milp/mig_model.h) extended with the
// current GPUs it may keep (k_g) and their replicas it may keep (x_r).
// Columns in this order: y_m, k_g, x_r, z_jp.
class TransitionModel {
 public:
  // At most `max_gpus` GPUs; the objective `weights` on GPUs, starts and
  // repartitions.
  TransitionModel(const Problem& problem,
                  const std::vector<CurrentGpu>& current, int max_gpus,
                  const TransitionWeights& weights)
      : problem_(problem),
        current_(current),
        mig_(MigColumns::Of(problem, weights.gpus + weights.repartitions,
                            nullptr)) {
    for (size_t g = 0; g < current.size(); ++g) {
      const GpuConfig& config = current[g].config;
      if (config.layout.empty()) continue;
      KeptGpu kept{
          static_cast<int>(g), config.layout.ProfileCounts(problem.gpu), {}};
      const auto& instances = config.layout.instances();
      for (size_t i = 0; i < instances.size(); ++i) {
        int j = config.services[i];
        if (j == kIdle || current[g].throughput[i] <= 0) continue;
        kept.replicas.push_back(keepable_.size());
        keepable_.push_back(
            {static_cast<int>(i), j, instances[i].profile,
             current[g].throughput[i] / problem.caps.required(j)});
      }
      kept_gpus_.push_back(std::move(kept));
    }
    mig_.AddY(&builder_);
    k_ = builder_.AddColumns(static_cast<int>(kept_gpus_.size()), 0, 1,
                             weights.gpus);
    x_ = builder_.AddColumns(static_cast<int>(keepable_.size()), 0, 1, 0);
    mig_.AddZ(&builder_, weights.starts);
    AddRows(max_gpus);
  }

  int y(size_t m) const { return mig_.y[m]; }
  int k(size_t i) const { return k_[i]; }
  int x(size_t r) const { return x_[r]; }
  int z(size_t c) const { return mig_.zs[c]; }
  int columns() const { return builder_.columns(); }

  void Load(OsiClpSolverInterface* solver) const { builder_.Load(solver); }

  // Returns the columns of `configs` (the plain optimum) put on the current
  // GPUs: a config goes to an unused current GPU with its multiset of
  // instances where there is one (the one with most of its replicas kept),
  // keeping each replica of a service it serves there on that profile that
  // counts as much as a new one; the rest are started on newly partitioned
  // GPUs. Returns nothing if a config's multiset is not a maximal one.
  std::optional<std::vector<double>> Seed(
      const std::vector<GpuConfig>& configs) const {
    std::vector<double> values(columns(), 0.0);
    std::vector<bool> used_gpu(kept_gpus_.size(), false);
    std::vector<bool> used_replica(keepable_.size(), false);
    // The keepable replicas of kept_gpus_[i] that serve (service, profile)
    // as well as a new one.
    auto matches = [&](size_t i, int service, int profile) {
      std::vector<size_t> found;
      for (size_t r : kept_gpus_[i].replicas) {
        const Keepable& k = keepable_[r];
        if (k.service == service && k.profile == profile && !used_replica[r] &&
            k.utility >=
                problem_.caps.utility(service, profile) - kTieTolerance) {
          found.push_back(r);
        }
      }
      return found;
    };
    for (const GpuConfig& c : configs) {
      mig::Multiset counts = c.layout.ProfileCounts(problem_.gpu);
      const auto& instances = c.layout.instances();
      std::map<std::pair<int, int>, int> wanted;  // (service, profile) -> n
      for (size_t k = 0; k < instances.size(); ++k) {
        if (c.services[k] != kIdle) {
          ++wanted[{c.services[k], instances[k].profile}];
        }
      }
      std::optional<size_t> best;
      int best_kept = -1;
      for (size_t i = 0; i < kept_gpus_.size(); ++i) {
        if (used_gpu[i] || kept_gpus_[i].counts != counts) continue;
        int kept = 0;
        for (const auto& [key, n] : wanted) {
          kept += std::min<int>(n, matches(i, key.first, key.second).size());
        }
        if (kept > best_kept) {
          best = i;
          best_kept = kept;
        }
      }
      if (best) {
        used_gpu[*best] = true;
        values[k(*best)] = 1;
      } else {
        auto m =
            std::find(mig_.multisets.begin(), mig_.multisets.end(), counts);
        if (m == mig_.multisets.end()) return std::nullopt;
        values[y(m - mig_.multisets.begin())] += 1;
      }
      for (size_t k = 0; k < instances.size(); ++k) {
        int service = c.services[k];
        if (service == kIdle) continue;
        int profile = instances[k].profile;
        std::vector<size_t> kept =
            best ? matches(*best, service, profile) : std::vector<size_t>{};
        if (!kept.empty()) {
          used_replica[kept.front()] = true;
          values[x(kept.front())] = 1;
          continue;
        }
        auto it = std::find(mig_.z.begin(), mig_.z.end(),
                            std::pair{service, profile});
        if (it != mig_.z.end()) values[z(it - mig_.z.begin())] += 1;
      }
    }
    return values;
  }

  // Returns the counts of the solution `values`.
  TransitionCost Cost(const std::vector<double>& values) const {
    auto sum = [&](int from, int to) {
      int n = 0;
      for (int c = from; c < to; ++c)
        n += static_cast<int>(std::lround(values[c]));
      return n;
    };
    return {sum(mig_.y.first, k_.end()), sum(mig_.zs.first, mig_.zs.end()),
            sum(mig_.y.first, mig_.y.end()), sum(x_.first, x_.end())};
  }

  // Puts the solution `values` on GPUs: the kept GPUs with their kept
  // replicas, then the new ones, each service's starts filling free
  // instances of their profile in that order.
  void Place(const std::vector<double>& values, TransitionSolution* out) const {
    auto count = [&](int c) {
      return static_cast<int>(std::lround(values[c]));
    };
    for (size_t i = 0; i < kept_gpus_.size(); ++i) {
      if (count(k(i)) == 0) continue;
      GpuConfig config = current_[kept_gpus_[i].current].config;
      std::fill(config.services.begin(), config.services.end(), kIdle);
      std::vector<bool> kept(config.services.size(), false);
      for (size_t r : kept_gpus_[i].replicas) {
        if (count(x(r)) == 0) continue;
        config.services[keepable_[r].instance] = keepable_[r].service;
        kept[keepable_[r].instance] = true;
      }
      out->configs.push_back(std::move(config));
      out->from.push_back(kept_gpus_[i].current);
      out->kept.push_back(std::move(kept));
    }
    for (size_t m = 0; m < mig_.multisets.size(); ++m) {
      for (int n = count(y(m)); n > 0; --n) {
        out->configs.push_back(
            {mig_.layouts[m], std::vector<int>(mig_.layouts[m].size(), kIdle)});
        out->from.push_back(-1);
        out->kept.emplace_back(mig_.layouts[m].size(), false);
      }
    }
    for (size_t c = 0; c < mig_.z.size(); ++c) {
      auto [service, profile] = mig_.z[c];
      int want = count(z(c));
      for (GpuConfig& config : out->configs) {
        const auto& instances = config.layout.instances();
        for (size_t i = 0; i < instances.size() && want > 0; ++i) {
          if (instances[i].profile == profile && config.services[i] == kIdle) {
            config.services[i] = service;
            --want;
          }
        }
      }
    }
  }

 private:
  // The MIG rows with the kept GPUs' instances and replicas, a replica kept
  // only on its kept GPU, and at most `max_gpus` GPUs.
  void AddRows(int max_gpus) {
    const int num_profiles = static_cast<int>(problem_.gpu.profiles.size());
    for (int p = 0; p < num_profiles; ++p) {
      Row supply;
      AddSupplyTerms(mig_, p, &supply);
      for (size_t i = 0; i < kept_gpus_.size(); ++i) {
        int count = kept_gpus_[i].counts[p];
        if (count != 0) supply.Add(k(i), -count);
      }
      for (size_t r = 0; r < keepable_.size(); ++r) {
        if (keepable_[r].profile == p) supply.Add(x(r), 1);
      }
      builder_.AddRow(supply, -COIN_DBL_MAX, 0);
    }
    for (int j = 0; j < problem_.num_services(); ++j) {
      Row demand, count;
      for (size_t r = 0; r < keepable_.size(); ++r) {
        if (keepable_[r].service != j) continue;
        demand.Add(x(r), keepable_[r].utility);
        count.Add(x(r), 1);
      }
      AddDemandTerms(mig_, j, &demand);
      // Rounding noise must not make an exact cover look short.
      builder_.AddRow(demand, 1.0 - kRateTolerance, COIN_DBL_MAX);
      if (int least = LeastReplicas(problem_, j); least > 0) {
        AddCountTerms(mig_, j, &count);
        builder_.AddRow(count, least, COIN_DBL_MAX);
      }
    }
    for (size_t i = 0; i < kept_gpus_.size(); ++i) {
      for (size_t r : kept_gpus_[i].replicas) {
        Row kept;
        kept.Add(x(r), 1);
        kept.Add(k(i), -1);
        builder_.AddRow(kept, -COIN_DBL_MAX, 0);
      }
    }
    Row gpus;
    for (int c = mig_.y.first; c < k_.end(); ++c) gpus.Add(c, 1.0);
    builder_.AddRow(gpus, 0, max_gpus);
  }

  const Problem& problem_;
  const std::vector<CurrentGpu>& current_;
  MigColumns mig_;
  std::vector<KeptGpu> kept_gpus_;  // current GPUs with a layout
  std::vector<Keepable> keepable_;
  ModelBuilder builder_;
  Block k_;
  Block x_;
};

}  // namespace

Status TransitionOptions::Validate() const {
  if (extra_gpus < 0) {
    return Status::InvalidArgument(
        fmt::format("--extra-gpus: {} is negative", extra_gpus));
  }
  if (weights) {
    const TransitionWeights& w = *weights;
    if (w.gpus < 0 || w.starts < 0 || w.repartitions < 0 ||
        w.gpus + w.starts + w.repartitions <= 0) {
      return Status::InvalidArgument(
          "--weights: weights must be non-negative and not all zero");
    }
  }
  return Status::Ok();
}

TransitionSolution SolveTransition(const Problem& problem,
                                   const std::vector<CurrentGpu>& current,
                                   const SolveOptions& options,
                                   const TransitionOptions& transition) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  TransitionSolution out;
  SolveOptions phase1 = options;
  phase1.time_limit_s = options.time_limit_s / 2;
  MilpOptimizer milp;
  out.plain = milp.Solve(
      problem, deployment::CompletionRates(problem.num_services(), 0.0),
      phase1);
  if (out.plain.outcome == Outcome::kInfeasible) {
    out.outcome = Outcome::kInfeasible;
    out.reason = out.plain.reason;
    return out;
  }
  if (options.progress) {
    options.progress(fmt::format(
        "optimize: milp --from: phase 1: {} GPUs ({}); phase 2: fewest starts",
        out.plain.configs.size(),
        deployment::SolveStatusName(out.plain.outcome)));
  }
  const int max_gpus =
      static_cast<int>(out.plain.configs.size()) + transition.extra_gpus;
  // Lexicographic: a start outweighs any GPU count, a GPU any number of
  // repartitions (both at most max_gpus).
  const double n = max_gpus + 1;
  TransitionWeights weights =
      transition.weights.value_or(TransitionWeights{n, n * n, 1});
  TransitionModel model(problem, current, max_gpus, weights);
  OsiClpSolverInterface solver;
  model.Load(&solver);
  CbcModel cbc(solver);
  cbc.setLogLevel(0);  // CBC prints on stdout, which carries our output
  std::optional<std::vector<double>> seed = model.Seed(out.plain.configs);
  double seed_objective = 0;
  if (seed) {
    const double* c = solver.getObjCoefficients();
    for (int i = 0; i < model.columns(); ++i)
      seed_objective += c[i] * (*seed)[i];
    cbc.setBestSolution(seed->data(), model.columns(), seed_objective, true);
  }
  std::vector<std::string> arguments;
  if (!transition.weights) arguments = {"-increment", "0.999"};
  RunCbcSolver(&cbc, std::max(0.1, SecondsLeft(deadline)), arguments);
  out.nodes = cbc.getNodeCount();
  std::vector<double> values;
  if (cbc.bestSolution() != nullptr) {
    values.assign(cbc.bestSolution(), cbc.bestSolution() + model.columns());
  } else if (seed) {
    values = *seed;
  } else {
    out.outcome = Outcome::kInfeasible;
    out.reason = "phase 2 found no deployment within the time limit";
    return out;
  }
  model.Place(values, &out);
  out.cost = model.Cost(values);
  bool proven = cbc.isProvenOptimal();
  double bound = proven ? cbc.getObjValue() : cbc.getBestPossibleObjValue();
  out.starts_bound =
      transition.weights
          ? 0
          : std::max(0.0, std::ceil(bound / (n * n) - 1 + 1 / (n * n) -
                                    kRoundingTolerance));
  if (proven && !transition.weights) out.starts_bound = out.cost.pod_starts;
  out.outcome = proven && out.plain.outcome == Outcome::kOptimal
                    ? Outcome::kOptimal
                    : Outcome::kTimeLimit;
  return out;
}

}  // namespace migserve::optimizer
