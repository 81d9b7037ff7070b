#include "optimizer/milp/dive.h"

#include <algorithm>
#include <cmath>
#include <coin/CbcModel.hpp>

#include "optimizer/milp/cbc_run.h"
#include "util/tolerance.h"

namespace migserve::optimizer::milp {
namespace {

// A dive fixes at once this share's inverse of the services it has left.
constexpr int kBatchDivisor = 100;

// A service a dive may fix next: to its cheapest cover at the LP's prices,
// at `distance` from the LP's solution.
struct Candidate {
  double distance;
  size_t service;
  Cover cover;
};

// The services not `fixed`, closest first (each distance scaled by a
// random factor in [1, 2) with `rng`).
std::vector<Candidate> Candidates(const OsiClpSolverInterface& solver,
                                  const std::vector<ServiceColumns>& services,
                                  const std::vector<bool>& fixed,
                                  std::mt19937* rng) {
  const double* x = solver.getColSolution();
  const double* dual = solver.getRowPrice();
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < services.size(); ++i) {
    if (fixed[i]) continue;
    const ServiceColumns& s = services[i];
    // A price floor: among free instances the cover takes the fewest.
    Cover cover = ServiceCover(s, Prices(s, dual, kCostTolerance));
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
  return candidates;
}

}  // namespace

std::optional<std::vector<double>> Dive(
    const OsiClpSolverInterface& root,
    const std::vector<ServiceColumns>& services, double limit,
    const MilpOptions& options, Clock::time_point deadline, std::mt19937* rng) {
  OsiClpSolverInterface solver(root);
  std::vector<bool> fixed(services.size(), false);
  // Fixes service `s` to `counts` instances of each profile (null: frees
  // it again).
  auto set = [&](const ServiceColumns& s, const std::vector<int>* counts) {
    for (size_t k = 0; k < s.column.size(); ++k) {
      double n = counts == nullptr ? 0.0 : (*counts)[k];
      solver.setColBounds(s.column[k], n, counts == nullptr ? COIN_DBL_MAX : n);
      if (!s.uses.empty()) {
        // survive's spare: the profiles the cover uses.
        double used = n > 0 ? 1.0 : 0.0;
        solver.setColBounds(s.uses[k], used, counts == nullptr ? 1.0 : used);
      }
    }
  };
  // Whether the LP, solved again, still has room within `limit`.
  auto holds = [&] {
    solver.resolve();
    return solver.isProvenOptimal() &&
           AddServiceCuts(services, options.cut_rounds, &solver) &&
           solver.getObjValue() <= limit + kCostTolerance;
  };
  auto fix = [&](const ServiceColumns& s, const std::vector<int>* counts) {
    set(s, counts);
    return holds();
  };
  // survive's spare rows leave CBC binaries that make the services a dive
  // frees slow to finish: it fixes every service then.
  const bool spare = !services.empty() && services.front().keep >= 0;
  const int steps = static_cast<int>(services.size()) -
                    (spare ? 0 : std::max(0, options.dive_free));
  for (int step = 0; step < steps; ++step) {
    if (SecondsLeft(deadline) <= 0) return std::nullopt;
    std::vector<Candidate> candidates =
        Candidates(solver, services, fixed, rng);
    // At fleet scale one service per LP solve takes longer than the time
    // there is: fix the closest 1% of the services left at once, and one
    // at a time when that fails (on the paper's workloads always one).
    size_t batch =
        std::min<size_t>(candidates.size(), (steps - step) / kBatchDivisor);
    if (batch > 1) {
      for (size_t k = 0; k < batch; ++k) {
        set(services[candidates[k].service], &candidates[k].cover.counts);
      }
      if (holds()) {
        for (size_t k = 0; k < batch; ++k) fixed[candidates[k].service] = true;
        step += static_cast<int>(batch) - 1;
        continue;
      }
      for (size_t k = 0; k < batch; ++k) {
        set(services[candidates[k].service], nullptr);
      }
      solver.resolve();
    }
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
  if (options.nodes > 0) cbc.setMaximumNodes(std::max(1, options.nodes / 10));
  cbc.setCutoff(limit + kCostTolerance);
  StopWhenInterrupted(&cbc);
  cbc.branchAndBound();
  const double* best = cbc.bestSolution();
  if (best == nullptr) return std::nullopt;
  return std::vector<double>(best, best + solver.getNumCols());
}

}  // namespace migserve::optimizer::milp
