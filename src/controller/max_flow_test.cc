#include "controller/max_flow.h"

#include <gtest/gtest.h>

namespace migserve::controller {
namespace {

TEST(MaxFlowTest, FindsTheMinimumCut) {
  // The classic CLRS network; its maximum flow is 23.
  MaxFlow flow(6);
  flow.AddEdge(0, 1, 16);
  flow.AddEdge(0, 2, 13);
  flow.AddEdge(1, 3, 12);
  flow.AddEdge(2, 1, 4);
  flow.AddEdge(2, 4, 14);
  flow.AddEdge(3, 2, 9);
  flow.AddEdge(3, 5, 20);
  flow.AddEdge(4, 3, 7);
  flow.AddEdge(4, 5, 4);
  EXPECT_DOUBLE_EQ(flow.Solve(0, 5), 23);
}

TEST(MaxFlowTest, InfiniteEdgesAndFractions) {
  MaxFlow flow(4);
  flow.AddEdge(0, 1, 2.5);
  flow.AddEdge(1, 2, MaxFlow::kInfinity);
  flow.AddEdge(2, 3, 1.25);
  flow.AddEdge(1, 3, 0.5);
  EXPECT_DOUBLE_EQ(flow.Solve(0, 3), 1.75);
}

}  // namespace
}  // namespace migserve::controller
