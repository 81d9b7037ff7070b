#include "optimizer/milp/transition_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/OsiClpSolverInterface.hpp>
#include <map>
#include <queue>

#include "optimizer/deadline.h"
#include "optimizer/milp/cbc_run.h"
#include "optimizer/milp/mig_model.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/survive.h"
#include "util/tolerance.h"

namespace migserve::optimizer::milp {
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

  // Returns the columns of a deployment as good as `configs` (the plain
  // optimum: the same GPUs of each multiset and instances of each service
  // and profile) that keeps current GPUs and replicas: current GPUs of a
  // multiset the optimum uses are kept, those that keep the most replicas
  // first, each keeping the replicas that count as much as a new one on
  // (service, profile) pairs the optimum still starts; the rest are new
  // GPUs and starts. Returns nothing if a config's multiset is not a
  // maximal one.
  std::optional<std::vector<double>> Seed(
      const std::vector<GpuConfig>& configs) const {
    std::vector<double> values(columns(), 0.0);
    std::map<mig::Multiset, int> multiset_index;
    for (size_t m = 0; m < mig_.multisets.size(); ++m) {
      multiset_index[mig_.multisets[m]] = static_cast<int>(m);
    }
    std::map<std::pair<int, int>, int> z_index;  // (service, profile)
    for (size_t c = 0; c < mig_.z.size(); ++c) {
      z_index[mig_.z[c]] = static_cast<int>(c);
    }
    std::vector<int> gpus_left(mig_.multisets.size(), 0);
    std::vector<int> starts_left(mig_.z.size(), 0);
    for (const GpuConfig& c : configs) {
      auto m = multiset_index.find(c.layout.ProfileCounts(problem_.gpu));
      if (m == multiset_index.end()) return std::nullopt;
      ++gpus_left[m->second];
      const auto& instances = c.layout.instances();
      for (size_t k = 0; k < instances.size(); ++k) {
        if (c.services[k] == kIdle) continue;
        auto z = z_index.find({c.services[k], instances[k].profile});
        if (z != z_index.end()) ++starts_left[z->second];
      }
    }
    // The keepable replicas of kept_gpus_[i] as good as a new one, with
    // their z column.
    std::vector<std::vector<std::pair<size_t, int>>> good(kept_gpus_.size());
    for (size_t i = 0; i < kept_gpus_.size(); ++i) {
      for (size_t r : kept_gpus_[i].replicas) {
        const Keepable& k = keepable_[r];
        auto z = z_index.find({k.service, k.profile});
        if (z != z_index.end() &&
            k.utility >=
                problem_.caps.utility(k.service, k.profile) - kTieTolerance) {
          good[i].emplace_back(r, z->second);
        }
      }
    }
    // Lazy greedy: a GPU's count of replicas it would keep only falls as
    // starts are used up, so a count taken from the heap is rechecked and
    // kept only while it still leads. (count, -GPU): the lowest GPU among
    // equals.
    auto keeps = [&](size_t i) {
      std::map<int, int> used;
      int n = 0;
      for (const auto& [r, z] : good[i]) {
        if (used[z] < starts_left[z]) {
          ++used[z];
          ++n;
        }
      }
      return n;
    };
    std::priority_queue<std::pair<int, int>> heap;
    std::vector<int> multiset_of(kept_gpus_.size(), -1);
    for (size_t i = 0; i < kept_gpus_.size(); ++i) {
      auto m = multiset_index.find(kept_gpus_[i].counts);
      if (m == multiset_index.end() || gpus_left[m->second] == 0) continue;
      multiset_of[i] = m->second;
      heap.emplace(static_cast<int>(good[i].size()), -static_cast<int>(i));
    }
    while (!heap.empty()) {
      auto [count, minus_i] = heap.top();
      heap.pop();
      size_t i = static_cast<size_t>(-minus_i);
      if (gpus_left[multiset_of[i]] == 0) continue;
      int now = keeps(i);
      if (now < count && !heap.empty() && heap.top().first > now) {
        heap.emplace(now, minus_i);
        continue;
      }
      --gpus_left[multiset_of[i]];
      values[k(i)] = 1;
      for (const auto& [r, z] : good[i]) {
        if (starts_left[z] == 0) continue;
        --starts_left[z];
        values[x(r)] = 1;
      }
    }
    for (size_t m = 0; m < gpus_left.size(); ++m) values[y(m)] = gpus_left[m];
    for (size_t c = 0; c < starts_left.size(); ++c) {
      values[z(c)] = starts_left[c];
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
  if (patience_nodes < 0) {
    return Status::InvalidArgument(
        fmt::format("--patience-nodes: {} is negative", patience_nodes));
  }
  if (patience_s < 0) {
    return Status::InvalidArgument(
        fmt::format("--patience: {} is negative", patience_s));
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

namespace {

// SolveTransition of a workload with survive: SolveToSurvive's
// deployment, every config new (the caller places it on the cluster,
// keeping the replicas it can; for a node domain, each on its node). Phase 2's
// model does not price the spare: its answers moved services onto GPUs that
// carried more of them than their spare on every shipped pair tried, so it is
// not run.
TransitionSolution SolveSurvivingTransition(const Problem& problem,
                                            const SolveOptions& options) {
  TransitionSolution out;
  MilpOptimizer milp;
  SurvivingSolution surviving = SolveToSurvive(milp, problem, options);
  out.plain = std::move(surviving.solution);
  if (out.plain.outcome == Outcome::kInfeasible) {
    out.outcome = Outcome::kInfeasible;
    out.reason = out.plain.reason;
    return out;
  }
  // Its bound is survive's; proven only where the deployment meets it.
  if (out.plain.info.milp) {
    out.plain.info.milp->best_bound = surviving.lower_bound;
  }
  out.configs = out.plain.configs;
  out.outcome = static_cast<int>(out.configs.size()) <= surviving.lower_bound
                    ? Outcome::kOptimal
                    : Outcome::kFeasible;
  out.from.assign(out.configs.size(), -1);
  for (const deployment::GpuConfig& c : out.configs) {
    out.kept.emplace_back(c.services.size(), false);
    for (int j : c.services) out.cost.pod_starts += j != deployment::kIdle;
  }
  out.cost.gpus = static_cast<int>(out.configs.size());
  out.cost.repartitioned_gpus = out.cost.gpus;
  if (!surviving.domains.index.empty()) {
    for (int d : surviving.domains.of) {
      out.node_of.push_back(surviving.domains.nodes[d]);
    }
  }
  return out;
}

}  // namespace

TransitionSolution SolveTransition(const Problem& problem,
                                   const std::vector<CurrentGpu>& current,
                                   const SolveOptions& options,
                                   const TransitionOptions& transition) {
  if (problem.workload.survive)
    return SolveSurvivingTransition(problem, options);
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  Solution plain = MilpOptimizer().Solve(
      problem, deployment::CompletionRates(problem.num_services(), 0.0),
      options);
  if (plain.outcome == Outcome::kInfeasible) {
    TransitionSolution out;
    out.outcome = Outcome::kInfeasible;
    out.reason = plain.reason;
    out.plain = std::move(plain);
    return out;
  }
  if (options.progress) {
    options.progress(fmt::format(
        "optimize: milp --from: phase 1: {} GPUs ({}); phase 2: fewest starts",
        plain.configs.size(), deployment::SolveStatusName(plain.outcome)));
  }
  SolveOptions phase2 = options;
  phase2.time_limit_s = std::max(0.1, SecondsLeft(deadline));
  return SolveTransitionFrom(problem, current, std::move(plain), phase2,
                             transition);
}

TransitionSolution SolveTransitionFrom(const Problem& problem,
                                       const std::vector<CurrentGpu>& current,
                                       Solution plain,
                                       const SolveOptions& options,
                                       const TransitionOptions& transition) {
  TransitionSolution out;
  out.plain = std::move(plain);
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
  CbcRunOptions run;
  run.limits.seconds = options.time_limit_s;
  run.limits.nodes = options.milp.nodes;
  run.limits.patience_nodes = transition.patience_nodes;
  run.limits.patience_s = transition.patience_s;
  std::optional<std::vector<double>> seed = model.Seed(out.plain.configs);
  if (seed) {
    const double* c = solver.getObjCoefficients();
    for (int i = 0; i < model.columns(); ++i)
      run.incumbent_cost += c[i] * (*seed)[i];
    run.incumbent = *seed;
  }
  if (!transition.weights) run.arguments = {"-increment", "0.999"};
  // CBC's cut generators prove the fewest starts (starts_bound), and cost
  // phase 2 most of its time at fleet scale (normal-1 at 1.3x from its
  // optimum: 2.8 s of 3.1 at 50 nodes, 0.1 s without).
  if (!transition.cuts)
    run.arguments.insert(run.arguments.end(), {"-cuts", "off"});
  if (options.progress) {
    run.progress = [&options](const std::string& line) {
      options.progress("optimize: milp --from: phase 2: " + line);
    };
  }
  CbcAnswer answer = RunCbc(solver, run);
  out.nodes = answer.nodes;
  std::vector<double> values;
  if (answer.best) {
    values = std::move(*answer.best);
  } else if (seed) {
    values = *seed;
  } else {
    out.outcome = Outcome::kInfeasible;
    out.reason = "phase 2 found no deployment within the time limit";
    return out;
  }
  model.Place(values, &out);
  out.cost = model.Cost(values);
  bool proven = answer.proven;
  double bound = proven ? answer.objective : answer.bound;
  out.starts_bound =
      transition.weights
          ? 0
          : std::max(0.0, std::ceil(bound / (n * n) - 1 + 1 / (n * n) -
                                    kRoundingTolerance));
  if (proven && !transition.weights) out.starts_bound = out.cost.pod_starts;
  out.outcome = proven && out.plain.outcome == Outcome::kOptimal
                    ? Outcome::kOptimal
                : answer.timed_out || out.plain.outcome == Outcome::kTimeLimit
                    ? Outcome::kTimeLimit
                    : Outcome::kFeasible;
  return out;
}

}  // namespace migserve::optimizer::milp
