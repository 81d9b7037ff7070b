#include "optimizer/milp/service_cuts.h"

#include <gtest/gtest.h>

#include <coin/OsiClpSolverInterface.hpp>
#include <functional>
#include <random>

namespace migserve::optimizer::milp {
namespace {

// Every count vector up to what covers the demand (with `keep` >= 0, keep
// plus the largest instance too), or the count, alone, by enumeration.
double BruteForceCover(const std::vector<double>& price,
                       const std::vector<double>& utility, double demand,
                       int least = 0, double keep = -1) {
  double best = 1e300;
  double need = demand;
  for (double u : utility) need = std::max(need, keep + u);
  std::vector<int> n(price.size(), 0);
  std::function<void(size_t)> visit = [&](size_t k) {
    if (k == price.size()) {
      double got = 0, cost = 0, largest = 0;
      int count = 0;
      for (size_t i = 0; i < n.size(); ++i) {
        got += utility[i] * n[i];
        cost += price[i] * n[i];
        count += n[i];
        if (n[i] > 0) largest = std::max(largest, utility[i]);
      }
      if (got >= demand && count >= least &&
          (keep < 0 || got >= keep + largest)) {
        best = std::min(best, cost);
      }
      return;
    }
    int most = std::max(least, static_cast<int>(std::ceil(need / utility[k])));
    for (n[k] = 0; n[k] <= most; ++n[k]) visit(k + 1);
    n[k] = 0;
  };
  visit(0);
  return best;
}

// On 300 random instances of up to 5 columns the search finds the
// enumeration's least cost, and its counts cover the demand at that cost.
TEST(ServiceCutsTest, CheapestCoverMatchesEnumeration) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    int columns = 1 + trial % 5;
    std::vector<double> price(columns), utility(columns);
    for (int k = 0; k < columns; ++k) {
      utility[k] = unit(rng) * 0.5;
      // Some prices zero, some proportional to utility (ties).
      price[k] = trial % 7 == 0 && k == 0 ? 0.0
                 : trial % 3 == 0         ? utility[k] * 2
                                          : unit(rng);
    }
    double demand = unit(rng) * 2;
    Cover cover = CheapestCover(price, utility, demand);
    ASSERT_FALSE(cover.counts.empty());
    double expected = BruteForceCover(price, utility, demand);
    EXPECT_NEAR(cover.cost, expected, 1e-9) << "trial " << trial;
    double got = 0, cost = 0;
    for (int k = 0; k < columns; ++k) {
      got += utility[k] * cover.counts[k];
      cost += price[k] * cover.counts[k];
    }
    EXPECT_GE(got, demand - 1e-12);
    EXPECT_NEAR(cost, cover.cost, 1e-9);
  }
}

// With a least count of instances (min_replicas 2 to 5), on 300 random
// instances the search finds the enumeration's least cost with a cover that
// has the count: cheap small instances win where one big one would serve.
TEST(ServiceCutsTest, CheapestCoverWithACountMatchesEnumeration) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    int columns = 1 + trial % 4;
    int least = 2 + trial % 4;
    std::vector<double> price(columns), utility(columns);
    for (int k = 0; k < columns; ++k) {
      utility[k] = unit(rng);
      price[k] = trial % 5 == 0 ? utility[k] : unit(rng);
    }
    double demand = unit(rng);
    Cover cover = CheapestCover(price, utility, demand, least);
    ASSERT_FALSE(cover.counts.empty());
    EXPECT_NEAR(cover.cost, BruteForceCover(price, utility, demand, least),
                1e-9)
        << "trial " << trial;
    int count = 0;
    double got = 0;
    for (int k = 0; k < columns; ++k) {
      count += cover.counts[k];
      got += utility[k] * cover.counts[k];
    }
    EXPECT_GE(count, least);
    EXPECT_GE(got, demand - 1e-12);
  }
  // Demand 1: one instance of utility 1 at price 3, or halves at price 1.
  // Alone the big one is dearer (3 > 2); with two needed the halves win
  // anyway, and with four needed it is four halves (4), not the big one and
  // three halves (6).
  EXPECT_EQ(CheapestCover({3, 1}, {1, 0.5}, 1, 4).counts,
            (std::vector<int>{0, 4}));
  EXPECT_EQ(CheapestCover({1, 3}, {1, 0.5}, 1, 2).counts,
            (std::vector<int>{2, 0}));
}

// Under survive's spare rows a cover holds keep plus its largest instance:
// on 300 random instances ServiceCover finds the enumeration's least cost
// with a cover that does. Without keep it is CheapestCover.
TEST(ServiceCutsTest, SurvivingCoverMatchesEnumeration) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> unit(0.05, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    ServiceColumns s;
    int columns = 1 + trial % 4;
    for (int k = 0; k < columns; ++k) s.utility.push_back(unit(rng) * 0.6);
    std::vector<double> price(columns);
    for (int k = 0; k < columns; ++k) {
      price[k] = trial % 5 == 0 ? s.utility[k] : unit(rng);
    }
    s.demand = unit(rng) * 1.5;
    s.keep = unit(rng);
    s.least = trial % 3;
    Cover cover = ServiceCover(s, price);
    ASSERT_FALSE(cover.counts.empty());
    EXPECT_NEAR(cover.cost,
                BruteForceCover(price, s.utility, s.demand, s.least, s.keep),
                1e-9)
        << "trial " << trial;
    double got = 0, largest = 0;
    for (int k = 0; k < columns; ++k) {
      got += s.utility[k] * cover.counts[k];
      if (cover.counts[k] > 0) largest = std::max(largest, s.utility[k]);
    }
    EXPECT_GE(got, s.demand - 1e-12);
    EXPECT_GE(got, s.keep + largest - 1e-12);
  }
  // keep 1 on a whole-demand instance (utility 1, price 1) or halves (price
  // 0.6): plainly the big one (1 < 1.2); surviving, two big ones cost 2 and
  // three halves 1.8.
  ServiceColumns s;
  s.demand = 1;
  s.utility = {1, 0.5};
  EXPECT_EQ(ServiceCover(s, {1, 0.6}).counts, (std::vector<int>{1, 0}));
  s.keep = 1;
  EXPECT_EQ(ServiceCover(s, {1, 0.6}).counts, (std::vector<int>{0, 3}));
}

// Columns z0, z1, g; rows z0 + z1 - g <= 0 and 0.4 z0 + 0.3 z1 >= 1;
// minimize g: one service of demand 1 on instances of utility 0.4 or 0.3,
// both from one supply row that a GPU column fills.
void LoadOneService(OsiClpSolverInterface* solver) {
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, 3);
  int supply[] = {0, 1, 2}, demand[] = {0, 1};
  double supply_value[] = {1, 1, -1}, demand_value[] = {0.4, 0.3};
  matrix.appendRow(3, supply, supply_value);
  matrix.appendRow(2, demand, demand_value);
  std::vector<double> col_lb(3, 0), col_ub(3, 100), obj = {0, 0, 1};
  std::vector<double> row_lb = {-1e30, 1}, row_ub = {0, 1e30};
  solver->loadProblem(matrix, col_lb.data(), col_ub.data(), obj.data(),
                      row_lb.data(), row_ub.data());
  solver->messageHandler()->setLogLevel(0);
  solver->initialSolve();
}

ServiceColumns OneService() {
  ServiceColumns s;
  s.demand = 1 - 1e-9;
  s.column = {0, 1};
  s.utility = {0.4, 0.3};
  s.supply_row = {0, 0};
  return s;
}

// The LP buys 2.5 GPUs, the integer hull needs 3 instances: cuts bring the
// LP's objective from 2.5 to 3.
TEST(ServiceCutsTest, CutsReachTheIntegerHull) {
  OsiClpSolverInterface solver;
  LoadOneService(&solver);
  ASSERT_NEAR(solver.getObjValue(), 2.5, 1e-9);
  ASSERT_TRUE(AddServiceCuts({OneService()}, 50, &solver));
  EXPECT_NEAR(solver.getObjValue(), 3.0, 1e-6);
  EXPECT_EQ(solver.getNumRows(), 3);
}

// The generator cuts the model it was made for, and nothing else: a
// heuristic's mini branch and bound runs it on a preprocessed copy, where
// its cuts would name columns and rows out of range. Here the model is the
// copy of a larger one (a column or a row more).
TEST(ServiceCutsTest, TheGeneratorCutsOnlyItsOwnModel) {
  OsiClpSolverInterface model;
  LoadOneService(&model);
  OsiCuts cuts;
  ServiceCutGenerator({OneService()}, 3, 2)
      .generateCuts(model, cuts, CglTreeInfo());
  ASSERT_EQ(cuts.sizeRowCuts(), 1);
  EXPECT_EQ(cuts.rowCut(0).row().getMaxIndex(), 1);
  for (auto [columns, rows] : {std::pair{4, 2}, std::pair{2, 2}, {3, 3}}) {
    OsiCuts none;
    ServiceCutGenerator({OneService()}, columns, rows)
        .generateCuts(model, none, CglTreeInfo());
    EXPECT_EQ(none.sizeRowCuts(), 0) << columns << " columns, " << rows;
  }
}

}  // namespace
}  // namespace migserve::optimizer::milp
