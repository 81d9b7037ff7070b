#include "optimizer/milp_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <coin/CbcModel.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <map>
#include <optional>
#include <random>

#include "optimizer/cbc_run.h"
#include "optimizer/config_space.h"
#include "optimizer/deadline.h"
#include "optimizer/greedy_optimizer.h"
#include "optimizer/service_cuts.h"
#include "util/tolerance.h"

namespace migserve::optimizer {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

// One GPU type's columns: y_m for its multisets, then one z per (service,
// profile) the service can run on.
struct TypeColumns {
  const Problem* problem = nullptr;
  double cost = 1;
  std::vector<mig::Multiset> multisets;
  std::vector<mig::Layout> layouts;  // one per multiset
  int first_y = 0;
  int first_z = 0;
  std::vector<std::pair<int, int>> z;  // (service, profile) of first_z + k
};

struct Model {
  std::vector<TypeColumns> types;
  int columns = 0;
  OsiClpSolverInterface solver;
};

TypeColumns Type(const Problem& problem, double cost) {
  TypeColumns t;
  t.problem = &problem;
  t.cost = cost;
  t.multisets =
      mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, &t.layouts);
  return t;
}

void Build(std::vector<TypeColumns> types, const CompletionRates& initial,
           Model* model) {
  const int num_services = types.front().problem->num_services();
  int columns = 0;
  for (TypeColumns& t : types) {
    t.first_y = columns;
    columns += static_cast<int>(t.multisets.size());
    t.first_z = columns;
    for (int j = 0; j < num_services; ++j) {
      if (deployment::Satisfied(initial[j])) continue;
      for (int p = 0; p < t.problem->caps.num_profiles(); ++p) {
        if (t.problem->caps.utility(j, p) > 0) t.z.emplace_back(j, p);
      }
    }
    columns += static_cast<int>(t.z.size());
  }
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, columns);
  std::vector<double> row_lower, row_upper;
  // Supply, per type and profile: sum_j z_jp - sum_m count_m(p) y_m <= 0.
  for (const TypeColumns& t : types) {
    for (int p = 0; p < static_cast<int>(t.problem->gpu.profiles.size()); ++p) {
      std::vector<int> index;
      std::vector<double> value;
      for (size_t m = 0; m < t.multisets.size(); ++m) {
        if (t.multisets[m][p] > 0) {
          index.push_back(t.first_y + static_cast<int>(m));
          value.push_back(-t.multisets[m][p]);
        }
      }
      for (size_t k = 0; k < t.z.size(); ++k) {
        if (t.z[k].second == p) {
          index.push_back(t.first_z + static_cast<int>(k));
          value.push_back(1.0);
        }
      }
      matrix.appendRow(static_cast<int>(index.size()), index.data(),
                       value.data());
      row_lower.push_back(-COIN_DBL_MAX);
      row_upper.push_back(0.0);
    }
  }
  // Demand, per service over every type: sum u_jp z_jp >= 1 - c_j.
  for (int j = 0; j < num_services; ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    std::vector<int> index;
    std::vector<double> value;
    for (const TypeColumns& t : types) {
      for (size_t k = 0; k < t.z.size(); ++k) {
        if (t.z[k].first == j) {
          index.push_back(t.first_z + static_cast<int>(k));
          value.push_back(t.problem->caps.utility(j, t.z[k].second));
        }
      }
    }
    matrix.appendRow(static_cast<int>(index.size()), index.data(),
                     value.data());
    // Rounding noise must not make an exact cover look short.
    row_lower.push_back(1.0 - initial[j] - kRateTolerance);
    row_upper.push_back(COIN_DBL_MAX);
  }
  std::vector<double> col_lower(columns, 0.0);
  std::vector<double> col_upper(columns, COIN_DBL_MAX);
  std::vector<double> objective(columns, 0.0);
  for (const TypeColumns& t : types) {
    for (size_t m = 0; m < t.multisets.size(); ++m) {
      objective[t.first_y + m] = t.cost;
    }
  }
  model->solver.loadProblem(matrix, col_lower.data(), col_upper.data(),
                            objective.data(), row_lower.data(),
                            row_upper.data());
  for (int c = 0; c < columns; ++c) model->solver.setInteger(c);
  // CBC and CLP print on stdout, which carries our output: silence both.
  model->solver.messageHandler()->setLogLevel(0);
  model->solver.getModelPtr()->setLogLevel(0);
  model->types = std::move(types);
  model->columns = columns;
}

// The instance columns of each service that is not yet satisfied.
std::vector<ServiceColumns> ServiceColumnsOf(const Model& model,
                                             const CompletionRates& initial) {
  std::vector<ServiceColumns> services;
  const int num_services = model.types.front().problem->num_services();
  for (int j = 0; j < num_services; ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    ServiceColumns s;
    // Rounding noise must not make an exact cover look short.
    s.demand = 1.0 - initial[j] - kRateTolerance;
    int row = 0;
    for (const TypeColumns& t : model.types) {
      for (size_t k = 0; k < t.z.size(); ++k) {
        if (t.z[k].first != j) continue;
        s.column.push_back(t.first_z + static_cast<int>(k));
        s.utility.push_back(t.problem->caps.utility(j, t.z[k].second));
        s.supply_row.push_back(row + t.z[k].second);
      }
      row += static_cast<int>(t.problem->gpu.profiles.size());
    }
    services.push_back(std::move(s));
  }
  return services;
}

// Dantzig-Wolfe diving for an incumbent: fixes one service at a time to its
// cheapest integer cover under the current duals, re-solving with service
// cuts, as long as the LP stays at most `limit`. The services are tried in
// order of how near their LP instances are to their cover (with `rng`, the
// distances are randomized); if fixing one lifts the LP above the limit, the
// next is tried. CBC then places the last `options.dive_free` services and
// the layouts. Gives up at `deadline`. Returns the solution, or nothing.
std::optional<std::vector<double>> Dive(
    const OsiClpSolverInterface& root,
    const std::vector<ServiceColumns>& services, double limit,
    const MilpOptions& options, Clock::time_point deadline, std::mt19937* rng) {
  OsiClpSolverInterface solver(root);
  std::vector<bool> fixed(services.size(), false);
  auto fix = [&](const ServiceColumns& s, const std::vector<int>* counts) {
    for (size_t k = 0; k < s.column.size(); ++k) {
      double n = counts == nullptr ? 0.0 : (*counts)[k];
      solver.setColBounds(s.column[k], n, counts == nullptr ? COIN_DBL_MAX : n);
    }
    solver.resolve();
    return solver.isProvenOptimal() &&
           AddServiceCuts(services, options.cut_rounds, &solver) &&
           solver.getObjValue() <= limit + kCostTolerance;
  };
  const int steps =
      static_cast<int>(services.size()) - std::max(0, options.dive_free);
  for (int step = 0; step < steps; ++step) {
    if (SecondsLeft(deadline) <= 0) return std::nullopt;
    const double* x = solver.getColSolution();
    const double* dual = solver.getRowPrice();
    struct Candidate {
      double distance;
      size_t service;
      Cover cover;
    };
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < services.size(); ++i) {
      if (fixed[i]) continue;
      const ServiceColumns& s = services[i];
      // A price floor: among free instances the cover takes the fewest.
      Cover cover =
          CheapestCover(Prices(s, dual, kCostTolerance), s.utility, s.demand);
      if (cover.counts.empty()) continue;
      double distance = 0;
      for (size_t k = 0; k < s.column.size(); ++k) {
        distance += std::abs(x[s.column[k]] - cover.counts[k]);
      }
      if (rng != nullptr) {
        distance *= std::uniform_real_distribution<double>(1.0, 2.0)(*rng);
      }
      candidates.push_back({distance, i, std::move(cover)});
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) {
                return a.distance < b.distance;
              });
    bool moved = false;
    for (const Candidate& c : candidates) {
      if (SecondsLeft(deadline) <= 0) return std::nullopt;
      if (fix(services[c.service], &c.cover.counts)) {
        fixed[c.service] = true;
        moved = true;
        break;
      }
      // The cuts added on the way are valid everywhere: keep them.
      fix(services[c.service], nullptr);
    }
    if (!moved) return std::nullopt;
  }
  CbcModel cbc(solver);
  cbc.setLogLevel(0);  // CBC prints on stdout, which carries our output
  cbc.setMaximumSeconds(std::max(0.01, SecondsLeft(deadline)));
  cbc.setCutoff(limit + kCostTolerance);
  StopWhenInterrupted(&cbc);
  cbc.branchAndBound();
  const double* best = cbc.bestSolution();
  if (best == nullptr) return std::nullopt;
  return std::vector<double>(best, best + solver.getNumCols());
}

// Adds the columns of type `t`'s configs to `x`: multiset and instance
// counts.
void AddColumns(const TypeColumns& t, const std::vector<GpuConfig>& configs,
                std::vector<double>* x) {
  std::map<std::pair<int, int>, int> column;
  for (size_t k = 0; k < t.z.size(); ++k) {
    column[t.z[k]] = t.first_z + static_cast<int>(k);
  }
  for (const GpuConfig& c : configs) {
    // A config's layout may be any maximal one: find its multiset.
    mig::Multiset counts = c.layout.ProfileCounts(t.problem->gpu);
    auto m = std::find(t.multisets.begin(), t.multisets.end(), counts);
    if (m != t.multisets.end())
      (*x)[t.first_y + (m - t.multisets.begin())] += 1;
    const auto& instances = c.layout.instances();
    for (size_t i = 0; i < instances.size(); ++i) {
      auto it = column.find({c.services[i], instances[i].profile});
      if (it != column.end()) (*x)[it->second] += 1;
    }
  }
}

// Places type `t`'s part of the integer answer on GPUs: y_m copies of each
// multiset's layout, each service filling z_jp instances of profile p in
// GPU order.
std::vector<GpuConfig> Place(const TypeColumns& t, const double* x) {
  std::vector<GpuConfig> configs;
  for (size_t m = 0; m < t.multisets.size(); ++m) {
    int copies = static_cast<int>(std::lround(x[t.first_y + m]));
    for (int k = 0; k < copies; ++k) {
      const mig::Layout& layout = t.layouts[m];
      configs.push_back({layout, std::vector<int>(layout.size(), kIdle)});
    }
  }
  for (size_t k = 0; k < t.z.size(); ++k) {
    auto [service, profile] = t.z[k];
    int want = static_cast<int>(std::lround(x[t.first_z + k]));
    for (GpuConfig& c : configs) {
      const auto& instances = c.layout.instances();
      for (size_t i = 0; i < instances.size() && want > 0; ++i) {
        if (instances[i].profile == profile && c.services[i] == kIdle) {
          c.services[i] = service;
          --want;
        }
      }
    }
  }
  return configs;
}

double Cost(const Model& model,
            const std::vector<std::vector<GpuConfig>>& configs) {
  double cost = 0;
  for (size_t t = 0; t < configs.size(); ++t) {
    cost += model.types[t].cost * static_cast<double>(configs[t].size());
  }
  return cost;
}

// The cost of the model's solution `x`.
double Objective(const Model& model, const std::vector<double>& x) {
  double cost = 0;
  for (const TypeColumns& t : model.types) {
    for (size_t m = 0; m < t.multisets.size(); ++m) {
      cost += t.cost * static_cast<double>(std::lround(x[t.first_y + m]));
    }
  }
  return cost;
}

// What a solve of the model found: per type its configs.
struct ModelAnswer {
  bool optimal = false;
  std::vector<std::vector<GpuConfig>> configs;
  LpBounds root;
  double bound = 0;  // on the objective
  int nodes = 0;
  // Stopped within the relative gap (MilpOptions::gap), not proven.
  bool close = false;
  // What found the deployment: "seed", "dive", "cbc" or "one-service".
  std::string incumbent;
  MilpPhases phases;

  // Proven, within the gap, or stopped by the clock.
  Outcome outcome() const {
    return optimal ? Outcome::kOptimal
           : close ? Outcome::kFeasible
                   : Outcome::kTimeLimit;
  }

  // The statistics every solve reports.
  MilpInfo Info() const {
    MilpInfo info;
    info.lp_bound = root.lp;
    info.cut_bound = root.cuts;
    info.nodes = nodes;
    info.incumbent = incumbent;
    info.phase_seconds = phases;
    return info;
  }
};

// The profile of instance column `column` if it is one of type `t`'s, else
// -1.
int ProfileOf(const TypeColumns& t, int column) {
  int k = column - t.first_z;
  return k >= 0 && k < static_cast<int>(t.z.size()) ? t.z[k].second : -1;
}

// A feasible start that costs nothing to find: each service on GPUs of its
// own, all of one multiset, the one (of any type) that serves it at the
// lowest cost per unit of its demand. Returns the solution, or nothing if a
// service runs nowhere.
std::optional<std::vector<double>> OneServiceGpus(
    const Model& model, const std::vector<ServiceColumns>& services) {
  std::vector<double> x(model.columns, 0.0);
  for (const ServiceColumns& s : services) {
    double best_price = 0;
    const TypeColumns* best_type = nullptr;
    size_t best_m = 0;
    double best_utility = 0;
    for (const TypeColumns& t : model.types) {
      for (size_t m = 0; m < t.multisets.size(); ++m) {
        double u = 0;
        for (size_t k = 0; k < s.column.size(); ++k) {
          int p = ProfileOf(t, s.column[k]);
          if (p >= 0) u += t.multisets[m][p] * s.utility[k];
        }
        if (u <= 0) continue;
        double price = t.cost / u;
        if (best_type == nullptr || price < best_price) {
          best_price = price;
          best_type = &t;
          best_m = m;
          best_utility = u;
        }
      }
    }
    if (best_type == nullptr) return std::nullopt;
    double gpus = std::ceil(s.demand / best_utility);
    x[best_type->first_y + best_m] += gpus;
    for (int c : s.column) {
      int p = ProfileOf(*best_type, c);
      if (p >= 0) x[c] += gpus * best_type->multisets[best_m][p];
    }
  }
  return x;
}

// Solves the root LP of `model` and strengthens it with service cuts.
LpBounds SolveRoot(const std::vector<ServiceColumns>& services,
                   const MilpOptions& options, Model* model) {
  model->solver.initialSolve();
  if (!model->solver.isProvenOptimal()) return {};
  LpBounds bounds;
  bounds.lp = model->solver.getObjValue();
  AddServiceCuts(services, options.cut_rounds, &model->solver);
  bounds.cuts = model->solver.getObjValue();
  return bounds;
}

// Runs CBC's standard solver on `solver` for at most `seconds`, with
// `generator`'s cuts at every node (and then without preprocessing) unless
// it is null; returns its best solution, or nothing. Records in `answer`
// whether it proved optimality, raises its bound and adds its nodes.
std::optional<std::pair<std::vector<double>, double>> RunCbc(
    const OsiClpSolverInterface& solver, double seconds,
    const std::vector<double>* start, double start_cost,
    const std::vector<int>& priorities, bool one_cost, double cost,
    CglCutGenerator* generator, const CbcProgress& progress,
    ModelAnswer* answer) {
  CbcModel cbc(solver);
  cbc.setLogLevel(0);  // CBC prints on stdout, which carries our output
  if (generator != nullptr) cbc.addCutGenerator(generator, 1, "service");
  if (start != nullptr) {
    cbc.setBestSolution(start->data(), static_cast<int>(start->size()),
                        start_cost, true);
  }
  cbc.passInPriorities(priorities.data(), false);
  std::vector<std::string> arguments;
  if (one_cost)
    arguments.insert(arguments.end(),
                     {"-increment", std::to_string(cost * 0.999999)});
  if (generator != nullptr)
    arguments.insert(arguments.end(), {"-preprocess", "off"});
  RunCbcSolver(&cbc, seconds, arguments, progress);
  answer->optimal = cbc.isProvenOptimal();
  answer->bound = std::max(answer->bound, cbc.getBestPossibleObjValue());
  answer->nodes += cbc.getNodeCount();
  const double* best = cbc.bestSolution();
  if (best == nullptr) return std::nullopt;
  return std::pair{std::vector<double>(best, best + solver.getNumCols()),
                   cbc.getObjValue()};
}

// Solves `model` from the `seed` (per type; empty: none) by the `deadline`:
// service cuts at the root, dives for an incumbent, and if that does not
// meet the bound, CBC. Never returns worse than the seed.
ModelAnswer SolveModel(Model& model, const CompletionRates& initial,
                       std::vector<std::vector<GpuConfig>> seed,
                       const SolveOptions& options,
                       Clock::time_point deadline) {
  ModelAnswer answer;
  Clock::time_point phase = Clock::now();
  std::vector<ServiceColumns> services = ServiceColumnsOf(model, initial);
  answer.root = SolveRoot(services, options.milp, &model);
  answer.bound = answer.root.cuts;
  answer.phases.root = SecondsSince(phase);
  phase = Clock::now();
  double best_cost = seed.empty() ? COIN_DBL_MAX : Cost(model, seed);
  std::vector<double> best(model.columns, 0.0);
  for (size_t t = 0; t < seed.size(); ++t) {
    AddColumns(model.types[t], seed[t], &best);
  }
  if (!seed.empty()) answer.incumbent = "seed";
  // With one cost for every GPU only a whole GPU better is an improvement,
  // and the cut bound rounded up to whole GPUs is a proof.
  bool one_cost = std::all_of(
      model.types.begin(), model.types.end(),
      [&](const TypeColumns& t) { return t.cost == model.types[0].cost; });
  double cost = model.types[0].cost;
  // Keeps `x` if it is better than the best; says whether it was.
  auto adopt = [&](std::vector<double> x, double x_cost, const char* by) {
    if (x_cost >= best_cost - kCostTolerance) return false;
    best = std::move(x);
    best_cost = x_cost;
    answer.incumbent = by;
    return true;
  };
  Clock::time_point begin = Clock::now();
  auto report = [&](const std::string& what) {
    if (!options.progress) return;
    options.progress(fmt::format(
        "milp: {:.1f} s: {}; best {}, bound {:g}", SecondsSince(begin), what,
        best_cost == COIN_DBL_MAX ? std::string("none")
                                  : fmt::format("{:g}", best_cost),
        std::ceil(answer.bound - kCostTolerance)));
  };
  auto better = [&] {
    return one_cost ? best_cost - cost : best_cost - kCostTolerance;
  };
  auto proven = [&] {
    return one_cost &&
           best_cost <=
               std::ceil(answer.root.cuts / cost - kCostTolerance) * cost +
                   kCostTolerance;
  };
  // Close enough: the best is within the relative gap of the bound (whole
  // GPUs with one cost).
  auto close = [&] {
    if (best_cost == COIN_DBL_MAX) return false;
    double bound = one_cost
                       ? std::ceil(answer.bound / cost - kCostTolerance) * cost
                       : answer.bound;
    return best_cost - bound <=
           options.milp.gap * best_cost + kRoundingTolerance;
  };
  // Dives, the first by the rule and the others randomized, within a
  // quarter of the time left, until `dive_patience` in a row find nothing
  // better.
  std::mt19937 rng(options.seed);
  Clock::time_point dive_end =
      SecondsFromNow(std::max(0.0, SecondsLeft(deadline)) / 4);
  for (int d = 0, idle = 0;
       d < options.milp.dives && !proven() && !close() &&
       idle < options.milp.dive_patience && SecondsLeft(dive_end) > 0;
       ++d) {
    auto found = Dive(model.solver, services, better(), options.milp, dive_end,
                      d == 0 ? nullptr : &rng);
    ++idle;
    if (!found) continue;
    double found_cost = Objective(model, *found);
    if (adopt(std::move(*found), found_cost, "dive")) idle = 0;
    report(fmt::format("dive {}: {:g}", d + 1, found_cost));
  }
  // Whatever the dives did, CBC starts from a deployment.
  if (best_cost == COIN_DBL_MAX) {
    if (auto start = OneServiceGpus(model, services)) {
      double start_cost = Objective(model, *start);
      adopt(std::move(*start), start_cost, "one-service");
    }
  }
  answer.phases.incumbent = SecondsSince(phase);
  phase = Clock::now();
  if (proven()) {
    answer.optimal = true;
    answer.bound = best_cost;
  } else if (!close()) {
    // Branch on the layouts first: they decide the GPUs.
    std::vector<int> priorities(model.columns, 2);
    for (const TypeColumns& t : model.types) {
      for (size_t m = 0; m < t.multisets.size(); ++m) {
        priorities[t.first_y + m] = 1;
      }
    }
    // CBC's standard solver finds incumbents well; with service cuts at
    // every node it proves well. Alternate the two, restarting from the
    // best solution, with budgets doubling from half a second.
    ServiceCutGenerator generator(services);
    double budget = 0.5;
    CbcProgress cbc_progress;
    if (options.progress) {
      cbc_progress = [&](const std::string& line) {
        options.progress("milp: " + line);
      };
    }
    for (int run = 0;
         !answer.optimal && !close() && SecondsLeft(deadline) > 0.05; ++run) {
      bool with_cuts = options.milp.tree_cuts && run % 2 == 1;
      double seconds = std::max(0.1, std::min(budget, SecondsLeft(deadline)));
      if (run % 2 == 1) budget *= 2;
      bool have = best_cost < COIN_DBL_MAX;
      auto found =
          RunCbc(model.solver, seconds, have ? &best : nullptr, best_cost,
                 priorities, one_cost, cost, with_cuts ? &generator : nullptr,
                 cbc_progress, &answer);
      if (found) adopt(std::move(found->first), found->second, "cbc");
      report(fmt::format("CBC run {} ({}, {:.1f} s)", run + 1,
                         with_cuts ? "service cuts" : "standard", seconds));
    }
  }
  answer.phases.search = SecondsSince(phase);
  answer.close = !answer.optimal && close();
  if (best_cost < COIN_DBL_MAX) {
    for (const TypeColumns& t : model.types) {
      answer.configs.push_back(Place(t, best.data()));
    }
  }
  return answer;
}

}  // namespace

LpBounds LpBound(const Problem& problem, const CompletionRates& initial,
                 const MilpOptions& options) {
  Model model;
  Build({Type(problem, 1)}, initial, &model);
  return SolveRoot(ServiceColumnsOf(model, initial), options, &model);
}

Solution MilpOptimizer::Solve(const Problem& problem,
                              const CompletionRates& initial,
                              const SolveOptions& options) {
  // The time limit counts from here: the greedy seed (if any) and the
  // model are part of the solve.
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  Clock::time_point phase = Clock::now();
  std::vector<std::vector<GpuConfig>> seed;
  if (options.milp.greedy_seed) {
    seed.push_back(Greedy(ConfigSpace(problem), initial, options.greedy));
  }
  double seed_seconds = options.milp.greedy_seed ? SecondsSince(phase) : 0;
  phase = Clock::now();
  Model model;
  Build({Type(problem, 1)}, initial, &model);
  double model_seconds = SecondsSince(phase);
  ModelAnswer answer =
      SolveModel(model, initial, std::move(seed), options, deadline);
  answer.phases.seed = seed_seconds;
  answer.phases.model = model_seconds;
  Solution solution;
  solution.configs = std::move(answer.configs.front());
  double bound = answer.optimal ? static_cast<double>(solution.configs.size())
                                : answer.bound;
  double lower = std::ceil(bound - kCostTolerance);
  solution.outcome = answer.outcome();
  MilpInfo info = answer.Info();
  info.best_bound = lower;
  info.gap = solution.configs.empty()
                 ? 0.0
                 : (solution.configs.size() - lower) / solution.configs.size();
  solution.info.milp = std::move(info);
  return solution;
}

FleetSolution SolveFleet(const std::vector<FleetType>& types,
                         const CompletionRates& initial,
                         const SolveOptions& options) {
  // The time limit counts from here: the greedy seed (if any) and the
  // model are part of the solve.
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  std::vector<TypeColumns> columns;
  for (const FleetType& t : types) columns.push_back(Type(*t.problem, t.cost));
  // The seed, if asked for: the cheapest fleet of one type that the greedy
  // can build.
  Clock::time_point phase = Clock::now();
  std::vector<std::vector<GpuConfig>> seed;
  double seed_cost = 0;
  for (size_t t = 0; t < types.size() && options.milp.greedy_seed; ++t) {
    const Problem& p = *types[t].problem;
    bool serves_all = true;
    for (int j = 0; j < p.num_services(); ++j) {
      bool runs = false;
      for (int k = 0; k < p.caps.num_profiles(); ++k) {
        runs |= p.caps.utility(j, k) > 0;
      }
      serves_all &= runs || deployment::Satisfied(initial[j]);
    }
    if (!serves_all) continue;
    std::vector<GpuConfig> greedy =
        Greedy(ConfigSpace(p), initial, options.greedy);
    double cost = types[t].cost * static_cast<double>(greedy.size());
    if (seed.empty() || cost < seed_cost) {
      seed.assign(types.size(), {});
      seed[t] = std::move(greedy);
      seed_cost = cost;
    }
  }
  double seed_seconds = options.milp.greedy_seed ? SecondsSince(phase) : 0;
  phase = Clock::now();
  Model model;
  Build(std::move(columns), initial, &model);
  double model_seconds = SecondsSince(phase);
  ModelAnswer answer =
      SolveModel(model, initial, std::move(seed), options, deadline);
  answer.phases.seed = seed_seconds;
  answer.phases.model = model_seconds;
  FleetSolution solution;
  if (answer.configs.empty()) {
    solution.outcome = Outcome::kInfeasible;
    solution.reason = "no fleet found within the time limit";
    return solution;
  }
  double cost = Cost(model, answer.configs);
  solution.outcome = answer.outcome();
  solution.configs = std::move(answer.configs);
  MilpInfo info = answer.Info();
  info.cost = cost;
  info.cost_bound = answer.optimal ? cost : answer.bound;
  solution.info = std::move(info);
  return solution;
}

}  // namespace migserve::optimizer
