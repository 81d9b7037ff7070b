// The solver facade: a knapsack's proven optimum is the brute-force one,
// an infeasible model has no solution, and presolve off gives the same
// optimum.
#include "optimizer/milp/solve.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace migserve::optimizer::milp {
namespace {

TEST(SolveTest, AKnapsacksOptimumIsTheBruteForceOne) {
  const std::vector<double> weight = {12, 7, 11, 8, 9, 6};
  const std::vector<double> value = {24, 13, 23, 15, 16, 11};
  const double capacity = 26;
  double best = 0;
  for (int subset = 0; subset < 1 << 6; ++subset) {
    double w = 0, v = 0;
    for (int i = 0; i < 6; ++i) {
      if (subset & 1 << i) {
        w += weight[i];
        v += value[i];
      }
    }
    if (w <= capacity) best = std::max(best, v);
  }
  for (bool presolve : {true, false}) {
    // Minimized: each item's value a cost below zero.
    ModelBuilder m;
    Row row;
    for (int i = 0; i < 6; ++i) {
      row.Add(m.AddColumns(1, 0, 1, -value[i])[0], weight[i]);
    }
    m.AddRow(row, -kUnbounded, capacity);
    SolveAnswer a =
        Solve(m, {.seconds = 10, .nodes = 1000}, {.presolve = presolve});
    EXPECT_EQ(a.outcome, SolveOutcome::kOptimal);
    EXPECT_DOUBLE_EQ(a.objective, -best);
    ASSERT_EQ(a.values.size(), 6u);
    double w = 0, v = 0;
    for (int i = 0; i < 6; ++i) {
      EXPECT_TRUE(a.values[i] == std::round(a.values[i]));
      w += weight[i] * a.values[i];
      v += value[i] * a.values[i];
    }
    EXPECT_LE(w, capacity);
    EXPECT_DOUBLE_EQ(v, best);
    EXPECT_NEAR(a.bound, -best, 1e-6);
  }
}

TEST(SolveTest, AnInfeasibleModelHasNoSolution) {
  ModelBuilder m;
  Block x = m.AddColumns(1, 0, 5, 1);
  Row row;
  row.Add(x.first, 1);
  m.AddRow(row, 2, 1);  // 2 <= x <= 1
  SolveAnswer a = Solve(m, {.seconds = 10, .nodes = 100});
  EXPECT_EQ(a.outcome, SolveOutcome::kNoSolution);
  EXPECT_TRUE(a.values.empty());
}

}  // namespace
}  // namespace migserve::optimizer::milp
