#include "optimizer/transition_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <map>

#include "mig/layout_enumerator.h"
#include "optimizer/cbc_run.h"
#include "optimizer/deadline.h"
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

// The phase-2 model's columns, in this order: y_m, k_g, x_r, z_jp.
class TransitionModel {
 public:
  TransitionModel(const Problem& problem,
                  const std::vector<CurrentGpu>& current)
      : problem_(problem), current_(current) {
    multisets_ =
        mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, &layouts_);
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
    for (int j = 0; j < problem.num_services(); ++j) {
      for (int p = 0; p < problem.caps.num_profiles(); ++p) {
        if (problem.caps.utility(j, p) > 0) z_.emplace_back(j, p);
      }
    }
  }

  int y(size_t m) const { return static_cast<int>(m); }
  int k(size_t i) const { return static_cast<int>(multisets_.size() + i); }
  int x(size_t r) const { return k(kept_gpus_.size()) + static_cast<int>(r); }
  int z(size_t c) const { return x(keepable_.size()) + static_cast<int>(c); }
  int columns() const { return z(z_.size()); }

  // Loads the model into `solver`: at most `max_gpus` GPUs, the objective
  // `weights` on GPUs, starts and repartitions.
  void Load(int max_gpus, const TransitionWeights& weights,
            OsiClpSolverInterface* solver) const {
    const int num_profiles = static_cast<int>(problem_.gpu.profiles.size());
    CoinPackedMatrix matrix(false, 0, 0);
    matrix.setDimensions(0, columns());
    std::vector<double> row_lower, row_upper;
    auto add_row = [&](const std::vector<int>& index,
                       const std::vector<double>& value, double lower,
                       double upper) {
      matrix.appendRow(static_cast<int>(index.size()), index.data(),
                       value.data());
      row_lower.push_back(lower);
      row_upper.push_back(upper);
    };
    for (int p = 0; p < num_profiles; ++p) {
      std::vector<int> index;
      std::vector<double> value;
      for (size_t m = 0; m < multisets_.size(); ++m) {
        if (multisets_[m][p] == 0) continue;
        index.push_back(y(m));
        value.push_back(-multisets_[m][p]);
      }
      for (size_t i = 0; i < kept_gpus_.size(); ++i) {
        int count = kept_gpus_[i].counts[p];
        if (count == 0) continue;
        index.push_back(k(i));
        value.push_back(-count);
      }
      for (size_t r = 0; r < keepable_.size(); ++r) {
        if (keepable_[r].profile != p) continue;
        index.push_back(x(r));
        value.push_back(1);
      }
      for (size_t c = 0; c < z_.size(); ++c) {
        if (z_[c].second != p) continue;
        index.push_back(z(c));
        value.push_back(1);
      }
      add_row(index, value, -COIN_DBL_MAX, 0);
    }
    for (int j = 0; j < problem_.num_services(); ++j) {
      std::vector<int> index;
      std::vector<double> value;
      for (size_t r = 0; r < keepable_.size(); ++r) {
        if (keepable_[r].service != j) continue;
        index.push_back(x(r));
        value.push_back(keepable_[r].utility);
      }
      for (size_t c = 0; c < z_.size(); ++c) {
        if (z_[c].first != j) continue;
        index.push_back(z(c));
        value.push_back(problem_.caps.utility(j, z_[c].second));
      }
      // Rounding noise must not make an exact cover look short.
      add_row(index, value, 1.0 - kRateTolerance, COIN_DBL_MAX);
    }
    for (size_t i = 0; i < kept_gpus_.size(); ++i) {
      for (size_t r : kept_gpus_[i].replicas) {
        add_row({x(r), k(i)}, {1, -1}, -COIN_DBL_MAX, 0);
      }
    }
    std::vector<int> gpus;
    for (int c = 0; c < x(0); ++c) gpus.push_back(c);
    add_row(gpus, std::vector<double>(gpus.size(), 1.0), 0, max_gpus);

    std::vector<double> lower(columns(), 0.0), upper(columns(), COIN_DBL_MAX);
    std::vector<double> objective(columns(), 0.0);
    for (int c = 0; c < x(0); ++c) objective[c] = weights.gpus;
    for (size_t m = 0; m < multisets_.size(); ++m) {
      objective[y(m)] += weights.repartitions;
    }
    for (int c = x(0); c < z(0); ++c) upper[c] = 1;
    for (int c = k(0); c < x(0); ++c) upper[c] = 1;
    for (int c = z(0); c < columns(); ++c) objective[c] = weights.starts;
    solver->loadProblem(matrix, lower.data(), upper.data(), objective.data(),
                        row_lower.data(), row_upper.data());
    for (int c = 0; c < columns(); ++c) solver->setInteger(c);
    // CBC and CLP print on stdout, which carries our output: silence both.
    solver->messageHandler()->setLogLevel(0);
    solver->getModelPtr()->setLogLevel(0);
  }

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
        auto m = std::find(multisets_.begin(), multisets_.end(), counts);
        if (m == multisets_.end()) return std::nullopt;
        values[y(m - multisets_.begin())] += 1;
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
        auto it = std::find(z_.begin(), z_.end(), std::pair{service, profile});
        if (it != z_.end()) values[z(it - z_.begin())] += 1;
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
    return {sum(0, x(0)), sum(z(0), columns()), sum(0, k(0)), sum(x(0), z(0))};
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
    for (size_t m = 0; m < multisets_.size(); ++m) {
      for (int n = count(y(m)); n > 0; --n) {
        out->configs.push_back(
            {layouts_[m], std::vector<int>(layouts_[m].size(), kIdle)});
        out->from.push_back(-1);
        out->kept.emplace_back(layouts_[m].size(), false);
      }
    }
    for (size_t c = 0; c < z_.size(); ++c) {
      auto [service, profile] = z_[c];
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
  const Problem& problem_;
  const std::vector<CurrentGpu>& current_;
  std::vector<mig::Multiset> multisets_;
  std::vector<mig::Layout> layouts_;
  std::vector<KeptGpu> kept_gpus_;  // current GPUs with a layout
  std::vector<Keepable> keepable_;
  std::vector<std::pair<int, int>> z_;  // (service, profile)
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
        out.plain.configs.size(), OutcomeName(out.plain.outcome)));
  }
  const int max_gpus =
      static_cast<int>(out.plain.configs.size()) + transition.extra_gpus;
  // Lexicographic: a start outweighs any GPU count, a GPU any number of
  // repartitions (both at most max_gpus).
  const double n = max_gpus + 1;
  TransitionWeights weights =
      transition.weights.value_or(TransitionWeights{n, n * n, 1});
  TransitionModel model(problem, current);
  OsiClpSolverInterface solver;
  model.Load(max_gpus, weights, &solver);
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
