#include "optimizer/milp/service_cuts.h"

#include <algorithm>
#include <cmath>
#include <coin/CoinFinite.hpp>
#include <coin/OsiRowCut.hpp>
#include <numeric>

#include "util/tolerance.h"

namespace migserve::optimizer::milp {
namespace {

// Depth-first search over the columns in order of price per utility, each
// count from the most useful down, pruned by the fractional bound.
class CoverSearch {
 public:
  CoverSearch(const std::vector<double>& price,
              const std::vector<double>& utility)
      : price_(price), utility_(utility), order_(price.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int a, int b) {
      return price_[a] * utility_[b] < price_[b] * utility_[a];
    });
    counts_.assign(price.size(), 0);
  }

  Cover Run(double demand, int least) {
    best_.cost = COIN_DBL_MAX;
    Search(0, demand, least, 0.0);
    if (best_.cost == COIN_DBL_MAX) return {};
    return best_;
  }

 private:
  double Ratio(size_t i) const {
    return price_[order_[i]] / utility_[order_[i]];
  }

  void Found(double cost) {
    if (cost < best_.cost) best_ = {cost, counts_};
  }

  // `least`: instances still to take. Prices are not negative, so the
  // fractional bound, which ignores it, stays a bound.
  void Search(size_t i, double demand, int least, double cost) {
    if (demand <= 0 && least <= 0) {
      Found(cost);
      return;
    }
    if (i == order_.size()) return;
    int k = order_[i];
    int most = std::max(least, static_cast<int>(std::ceil(demand / utility_[k] -
                                                          kRoundingTolerance)));
    if (i + 1 == order_.size()) {
      counts_[k] = most;
      Found(cost + most * price_[k]);
      counts_[k] = 0;
      return;
    }
    // One fewer of this column leaves demand for columns that cost at least
    // as much per utility: once the bound reaches the best, it stays there.
    for (int n = most; n >= 0; --n) {
      double left = demand - n * utility_[k];
      double spent = cost + n * price_[k];
      if (left > 0 && spent + left * Ratio(i + 1) >= best_.cost - kTieTolerance)
        break;
      counts_[k] = n;
      Search(i + 1, left, least - n, spent);
    }
    counts_[k] = 0;
  }

  const std::vector<double>& price_;
  const std::vector<double>& utility_;
  std::vector<int> order_;
  std::vector<int> counts_;
  Cover best_;
};

}  // namespace

Cover CheapestCover(const std::vector<double>& price,
                    const std::vector<double>& utility, double demand,
                    int least) {
  return CoverSearch(price, utility).Run(demand, least);
}

Cover ServiceCover(const ServiceColumns& s, const std::vector<double>& price) {
  if (s.keep < 0) return CheapestCover(price, s.utility, s.demand, s.least);
  Cover best;
  for (size_t largest = 0; largest < s.utility.size(); ++largest) {
    std::vector<size_t> kept;
    std::vector<double> p, u;
    for (size_t k = 0; k < s.utility.size(); ++k) {
      if (s.utility[k] > s.utility[largest]) continue;
      kept.push_back(k);
      p.push_back(price[k]);
      u.push_back(s.utility[k]);
    }
    Cover c = CheapestCover(
        p, u, std::max(s.demand, s.keep + s.utility[largest]), s.least);
    if (c.counts.empty() || (!best.counts.empty() && c.cost >= best.cost)) {
      continue;
    }
    best.cost = c.cost;
    best.counts.assign(s.utility.size(), 0);
    for (size_t i = 0; i < kept.size(); ++i) best.counts[kept[i]] = c.counts[i];
  }
  return best;
}

std::vector<double> Prices(const ServiceColumns& s, const double* dual,
                           double floor) {
  std::vector<double> price(s.column.size());
  for (size_t k = 0; k < price.size(); ++k) {
    price[k] = std::max(floor, -dual[s.supply_row[k]]);
  }
  return price;
}

int SeparateServiceCuts(const std::vector<ServiceColumns>& services,
                        const double* x, const double* dual, OsiCuts* cuts) {
  int added = 0;
  for (const ServiceColumns& s : services) {
    std::vector<double> price = Prices(s, dual, 0.0);
    double used = 0;
    for (size_t k = 0; k < price.size(); ++k) used += price[k] * x[s.column[k]];
    Cover cover = ServiceCover(s, price);
    if (cover.counts.empty() || cover.cost <= used + kCostTolerance) continue;
    OsiRowCut cut;
    cut.setRow(static_cast<int>(price.size()), s.column.data(), price.data());
    // Slightly below the least cost: rounding must not cut off a cover.
    cut.setLb(cover.cost - kRoundingTolerance);
    cut.setUb(COIN_DBL_MAX);
    cuts->insert(cut);
    ++added;
  }
  return added;
}

bool AddServiceCuts(const std::vector<ServiceColumns>& services, int rounds,
                    OsiSolverInterface* solver) {
  for (int round = 0; round < rounds; ++round) {
    OsiCuts cuts;
    if (SeparateServiceCuts(services, solver->getColSolution(),
                            solver->getRowPrice(), &cuts) == 0) {
      break;
    }
    solver->applyCuts(cuts);
    solver->resolve();
    if (!solver->isProvenOptimal()) return false;
  }
  return true;
}

void ServiceCutGenerator::generateCuts(const OsiSolverInterface& si,
                                       OsiCuts& cs, const CglTreeInfo) {
  if (si.getNumCols() != columns_ || si.getNumRows() < rows_) return;
  SeparateServiceCuts(services_, si.getColSolution(), si.getRowPrice(), &cs);
}

}  // namespace migserve::optimizer::milp
