#include "cluster/plan_json.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

const mig::GpuModel& A100() {
  return *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
}

// The example of DESIGN 6.
constexpr const char* kDesignExample = R"({"actions": [
  {"id": 0, "kind": "repartition", "gpu": 5, "after": [],
   "remove": [{"profile": "7g.80gb", "start": 0}],
   "add": [{"profile": "3g.40gb", "start": 0}, {"profile": "3g.40gb", "start": 4}]},
  {"id": 1, "kind": "create", "gpu": 5, "profile": "3g.40gb", "start": 4,
   "service": "bert", "batch": 16, "procs": 1, "throughput": 850.0, "after": [0]},
  {"id": 2, "kind": "delete", "gpu": 1, "profile": "1g.10gb", "start": 3,
   "service": "bert", "throughput": 310.0, "after": [1]},
  {"id": 3, "kind": "migrate", "service": "bert", "throughput": 310.0, "after": [],
   "from": {"gpu": 2, "profile": "1g.10gb", "start": 0},
   "to": {"gpu": 9, "profile": "1g.10gb", "start": 6}}]})";

TEST(PlanJsonTest, ReadsTheDesignExampleAndRoundTrips) {
  TransitionPlan plan = ParsePlan(kDesignExample, "p.json", A100()).value();
  ASSERT_EQ(plan.actions.size(), 4u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kRepartition);
  EXPECT_EQ(plan.actions[0].add.size(), 2u);
  EXPECT_EQ(plan.actions[1].replica.batch, 16);
  EXPECT_EQ(plan.actions[2].after, std::vector<int>{1});
  EXPECT_EQ(plan.actions[3].to.gpu, 9);
  EXPECT_EQ(plan.actions[3].to.instance.start, 6);
  std::string text = FormatPlan(plan, A100());
  EXPECT_EQ(FormatPlan(ParsePlan(text, "again", A100()).value(), A100()), text);
}

TEST(PlanJsonTest, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"actions": [{"id": 0, "kind": "jump", "after": []}]})",
       "p.json: actions[0].kind: unknown kind"},
      {R"({"actions": [{"id": 0, "kind": "delete", "gpu": 1, "profile": "9g",
          "start": 0, "service": "a", "throughput": 1, "after": []}]})",
       "p.json: actions[0].profile: A100-SXM4-80GB has no profile 9g"},
      {R"({"actions": [{"id": 0, "kind": "delete", "gpu": 1,
          "profile": "1g.10gb", "start": 0, "service": "a", "throughput": 1,
          "after": [4]}]})",
       "p.json: actions[0].after: 4 is not an action listed before"},
      {R"({"actions": [{"id": 0, "kind": "migrate", "service": "a",
          "throughput": 1, "from": {"gpu": 1, "profile": "1g.10gb",
          "start": 0}, "after": []}]})",
       "p.json: actions[0].to: missing"},
  };
  for (const Case& c : cases) {
    auto plan = ParsePlan(c.json, "p.json", A100());
    ASSERT_FALSE(plan.ok()) << c.message;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << plan.status().message();
  }
}

}  // namespace
}  // namespace migserve::cluster
