#include "controller/goal_json.h"

#include <gtest/gtest.h>

namespace migserve::controller {
namespace {

TEST(GoalJsonTest, RoundTripsWithAndWithoutSurvive) {
  TransitionGoal goal;
  goal.required_before = {{"a", 100}, {"b", 50}};
  goal.required_after = {{"a", 80}};
  goal.target_gpus = 3;
  for (bool survive : {false, true}) {
    if (survive)
      goal.survive = workload::Survive{workload::FailureDomain::kNode, 0.5};
    auto back = ParseGoal(FormatGoal(goal), "goal");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->required_before, goal.required_before);
    EXPECT_EQ(back->required_after, goal.required_after);
    EXPECT_EQ(back->target_gpus, 3);
    EXPECT_EQ(back->survive, goal.survive);
  }
}

TEST(GoalJsonTest, ADamagedGoalNamesItsField) {
  auto keep = ParseGoal(
      R"({"required_before": {}, "required_after": {}, "target_gpus": 1,
          "survive": {"domain": "gpu", "keep": 2}})",
      "plan 3 goal");
  EXPECT_EQ(keep.status().message(),
            "plan 3 goal: survive.keep: must be in (0, 1], got 2");
  auto rate = ParseGoal(
      R"({"required_before": {"a": -1}, "required_after": {}, "target_gpus": 1})",
      "plan 3 goal");
  EXPECT_EQ(rate.status().message(),
            "plan 3 goal: required_before.a: expected a rate >= 0");
}

}  // namespace
}  // namespace migserve::controller
