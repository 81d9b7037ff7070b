#include "cluster/action.h"

#include <gtest/gtest.h>

namespace migserve::cluster {
namespace {

Action After(int id, std::vector<int> after) {
  Action a;
  a.id = id;
  a.after = std::move(after);
  return a;
}

TEST(ActionTest, StagesFollowTheLongestChainOfDependencies) {
  // 10 and 11 free; 12 after 10; 13 after 12 and 11; 14 after 11.
  TransitionPlan plan;
  plan.actions = {After(10, {}), After(11, {}), After(12, {10}),
                  After(13, {12, 11}), After(14, {11})};
  EXPECT_EQ(Stages(plan), (std::vector<int>{0, 0, 1, 2, 1}));
  EXPECT_TRUE(Stages(TransitionPlan{}).empty());
}

}  // namespace
}  // namespace migserve::cluster
