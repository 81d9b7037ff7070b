#include "optimizer/milp_optimizer.h"

#include <algorithm>
#include <cmath>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <map>

#include "optimizer/config_space.h"
#include "optimizer/greedy_optimizer.h"

namespace migserve::optimizer {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

// The model's columns: y_m first, then one z per (service, profile) the
// service can run on.
struct Model {
  int num_multisets = 0;
  std::vector<std::pair<int, int>> z;  // (service, profile) of column y + k
  OsiClpSolverInterface solver;
};

void Build(const Problem& problem, const std::vector<mig::Multiset>& multisets,
           const CompletionRates& initial, Model* model) {
  const int num_profiles = static_cast<int>(problem.gpu.profiles.size());
  model->num_multisets = static_cast<int>(multisets.size());
  for (int j = 0; j < problem.num_services(); ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    for (int p = 0; p < num_profiles; ++p) {
      if (problem.caps.utility(j, p) > 0) model->z.emplace_back(j, p);
    }
  }
  const int columns = model->num_multisets + static_cast<int>(model->z.size());
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, columns);
  std::vector<double> row_lower, row_upper;
  // Supply: sum_j z_jp - sum_m count_m(p) y_m <= 0.
  for (int p = 0; p < num_profiles; ++p) {
    std::vector<int> index;
    std::vector<double> value;
    for (int m = 0; m < model->num_multisets; ++m) {
      if (multisets[m][p] > 0) {
        index.push_back(m);
        value.push_back(-multisets[m][p]);
      }
    }
    for (size_t k = 0; k < model->z.size(); ++k) {
      if (model->z[k].second == p) {
        index.push_back(model->num_multisets + static_cast<int>(k));
        value.push_back(1.0);
      }
    }
    matrix.appendRow(static_cast<int>(index.size()), index.data(),
                     value.data());
    row_lower.push_back(-COIN_DBL_MAX);
    row_upper.push_back(0.0);
  }
  // Demand: sum_p u_jp z_jp >= 1 - c_j.
  for (int j = 0; j < problem.num_services(); ++j) {
    if (deployment::Satisfied(initial[j])) continue;
    std::vector<int> index;
    std::vector<double> value;
    for (size_t k = 0; k < model->z.size(); ++k) {
      if (model->z[k].first == j) {
        index.push_back(model->num_multisets + static_cast<int>(k));
        value.push_back(problem.caps.utility(j, model->z[k].second));
      }
    }
    matrix.appendRow(static_cast<int>(index.size()), index.data(),
                     value.data());
    // Rounding noise must not make an exact cover look short.
    row_lower.push_back(1.0 - initial[j] - 1e-9);
    row_upper.push_back(COIN_DBL_MAX);
  }
  std::vector<double> col_lower(columns, 0.0);
  std::vector<double> col_upper(columns, COIN_DBL_MAX);
  std::vector<double> objective(columns, 0.0);
  for (int m = 0; m < model->num_multisets; ++m) objective[m] = 1.0;
  model->solver.loadProblem(matrix, col_lower.data(), col_upper.data(),
                            objective.data(), row_lower.data(),
                            row_upper.data());
  for (int c = 0; c < columns; ++c) model->solver.setInteger(c);
  // CBC and CLP print on stdout, which carries our output: silence both.
  model->solver.messageHandler()->setLogLevel(0);
  model->solver.getModelPtr()->setLogLevel(0);
}

// The columns of a deployment: its multiset counts and instance counts.
std::vector<double> Columns(const ConfigSpace& space, const Model& model,
                            const std::vector<GpuConfig>& configs) {
  const mig::GpuModel& gpu = space.problem().gpu;
  std::vector<double> x(model.num_multisets + model.z.size(), 0.0);
  std::map<std::pair<int, int>, int> column;
  for (size_t k = 0; k < model.z.size(); ++k) {
    column[model.z[k]] = model.num_multisets + static_cast<int>(k);
  }
  for (const GpuConfig& c : configs) {
    // A config's layout may be any maximal one: find its multiset.
    mig::Multiset counts = c.layout.ProfileCounts(gpu);
    auto m =
        std::find(space.multisets().begin(), space.multisets().end(), counts);
    if (m != space.multisets().end()) x[m - space.multisets().begin()] += 1;
    const auto& instances = c.layout.instances();
    for (size_t i = 0; i < instances.size(); ++i) {
      auto it = column.find({c.services[i], instances[i].profile});
      if (it != column.end()) x[it->second] += 1;
    }
  }
  return x;
}

// Places the integer answer on GPUs: y_m copies of each multiset's layout,
// each service filling z_jp instances of profile p in GPU order.
std::vector<GpuConfig> Place(const ConfigSpace& space, const Model& model,
                             const double* x) {
  std::vector<GpuConfig> configs;
  for (int m = 0; m < model.num_multisets; ++m) {
    int copies = static_cast<int>(std::lround(x[m]));
    for (int k = 0; k < copies; ++k) {
      const mig::Layout& layout = space.layouts()[m];
      configs.push_back({layout, std::vector<int>(layout.size(), kIdle)});
    }
  }
  for (size_t k = 0; k < model.z.size(); ++k) {
    auto [service, profile] = model.z[k];
    int want = static_cast<int>(std::lround(x[model.num_multisets + k]));
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

}  // namespace

double LpBound(const Problem& problem, const CompletionRates& initial) {
  // Only the multisets are needed, not the pair configs of a ConfigSpace.
  Model model;
  Build(problem,
        mig::DistinctMultisets(problem.gpu, problem.maximal_layouts, nullptr),
        initial, &model);
  model.solver.initialSolve();
  return model.solver.isProvenOptimal() ? model.solver.getObjValue() : 0.0;
}

Solution MilpOptimizer::Solve(const Problem& problem,
                              const CompletionRates& initial,
                              const SolveOptions& options) {
  ConfigSpace space(problem);
  std::vector<GpuConfig> seed = Greedy(space, initial, options.greedy);
  Model model;
  Build(problem, space.multisets(), initial, &model);
  model.solver.initialSolve();
  double lp = model.solver.getObjValue();

  CbcModel cbc(model.solver);
  cbc.setLogLevel(0);  // CBC prints on stdout, which carries our output
  const int seed_gpus = static_cast<int>(seed.size());
  std::vector<double> start = Columns(space, model, seed);
  cbc.setBestSolution(start.data(), static_cast<int>(start.size()),
                      static_cast<double>(seed_gpus), true);
  // Branch on the layouts first: they decide the GPU count.
  std::vector<int> priorities(start.size(), 2);
  for (int m = 0; m < model.num_multisets; ++m) priorities[m] = 1;
  cbc.passInPriorities(priorities.data(), false);
  // CbcMain1 runs CBC's standard solver (presolve, cut generators and
  // heuristics); a bare CbcModel::branchAndBound has none of them. The
  // objective counts GPUs, so only a whole GPU better is an improvement
  // (-increment).
  std::string seconds = std::to_string(options.time_limit_s);
  const char* argv[] = {
      "migserve",      "-log",       "0",        "-slog",  "0",    "-sec",
      seconds.c_str(), "-increment", "0.999999", "-solve", "-quit"};
  CbcSolverUsefulData data;
  CbcMain0(cbc, data);
  CbcMain1(
      static_cast<int>(std::size(argv)), argv, cbc,
      [](CbcModel*, int) { return 0; }, data);

  Solution solution;
  const double* best = cbc.bestSolution();
  if (best != nullptr && cbc.getObjValue() < seed_gpus - 0.5) {
    solution.configs = Place(space, model, best);
  } else {
    solution.configs = std::move(seed);
  }
  bool optimal = cbc.isProvenOptimal();
  double bound = optimal ? static_cast<double>(solution.configs.size())
                         : std::max(lp, cbc.getBestPossibleObjValue());
  double lower = std::ceil(bound - 1e-6);
  solution.outcome = optimal ? Outcome::kOptimal : Outcome::kTimeLimit;
  solution.extra = {
      {"lp_bound", lp},
      {"best_bound", lower},
      {"gap", solution.configs.empty() ? 0.0
                                       : (solution.configs.size() - lower) /
                                             solution.configs.size()},
      {"nodes", cbc.getNodeCount()},
      {"seed_gpus", seed_gpus}};
  return solution;
}

}  // namespace migserve::optimizer
