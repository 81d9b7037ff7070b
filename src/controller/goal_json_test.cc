#include "controller/goal_json.h"

#include <gtest/gtest.h>

#include <string>

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
  struct Case {
    const char* fields;  // the goal's, beside target_gpus
    const char* error;
  };
  for (const Case& c : {
           Case{R"("required_before": {}, "required_after": {},
                   "survive": {"domain": "gpu", "keep": 2})",
                "survive.keep: must be in (0, 1], got 2"},
           // Rates (boundary/quantity.h): from 0 to 1e9 req/s.
           Case{R"("required_before": {"a": -1}, "required_after": {})",
                "required_before.a: rate (req/s) must be from 0 to 1e+09, "
                "got -1"},
           Case{R"("required_before": {}, "required_after": {"a": 2e9})",
                "required_after.a: rate (req/s) must be from 0 to 1e+09, "
                "got 2000000000"},
           Case{R"("required_before": {"a": "1"}, "required_after": {})",
                "required_before.a: expected a rate, a number"},
       }) {
    auto goal = ParseGoal(std::string("{\"target_gpus\": 1, ") + c.fields + "}",
                          "plan 3 goal");
    EXPECT_EQ(goal.status().message(), std::string("plan 3 goal: ") + c.error)
        << c.fields;
  }
}

}  // namespace
}  // namespace migserve::controller
