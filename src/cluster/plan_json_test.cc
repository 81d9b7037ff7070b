#include "cluster/plan_json.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

// DESIGN 6's example with GPUs named by node and index, on a mixed fleet.
constexpr const char* kExample = R"({
  "gpus": [{"node": "gpu-a1", "index": 5, "gpu": "A100-SXM4-80GB"},
           {"node": "gpu-a1", "index": 1, "gpu": "A100-SXM4-80GB"},
           {"node": "gpu-h1", "index": 2, "gpu": "H100-SXM5-80GB"},
           {"node": "gpu-h2", "index": 0, "gpu": "H100-SXM5-80GB"}],
  "actions": [
  {"id": 0, "kind": "repartition", "node": "gpu-a1", "index": 5, "after": [],
   "remove": [{"profile": "7g.80gb", "start": 0}],
   "add": [{"profile": "3g.40gb", "start": 0}, {"profile": "3g.40gb", "start": 4}]},
  {"id": 1, "kind": "create", "node": "gpu-a1", "index": 5,
   "profile": "3g.40gb", "start": 4, "service": "bert", "model": "bert-base",
   "batch": 16, "procs": 1, "throughput": 850.0, "after": [0]},
  {"id": 2, "kind": "delete", "node": "gpu-a1", "index": 1,
   "profile": "1g.10gb", "start": 3, "service": "bert", "throughput": 310.0,
   "after": [1]},
  {"id": 3, "kind": "migrate", "service": "bert", "throughput": 310.0, "after": [],
   "from": {"node": "gpu-h1", "index": 2, "profile": "1g.10gb", "start": 0},
   "to": {"node": "gpu-h2", "index": 0, "profile": "1g.10gb", "start": 6}}]})";

TEST(PlanJsonTest, ReadsGpusByNodeAndIndexWithTheirModelsAndRoundTrips) {
  TransitionPlan plan = ParsePlan(kExample, "p.json").value();
  ASSERT_EQ(plan.actions.size(), 4u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kRepartition);
  EXPECT_EQ(plan.actions[0].at.gpu, (GpuId{"gpu-a1", 5}));
  EXPECT_EQ(plan.actions[0].add.size(), 2u);
  EXPECT_EQ(plan.actions[1].replica.batch, 16);
  EXPECT_EQ(plan.actions[1].replica.model, "bert-base");
  EXPECT_EQ(plan.actions[2].after, std::vector<int>{1});
  EXPECT_EQ(plan.actions[3].to.gpu, (GpuId{"gpu-h2", 0}));
  EXPECT_EQ(plan.actions[3].to.model->name, "H100-SXM5-80GB");
  EXPECT_EQ(plan.actions[3].at.model->name, "H100-SXM5-80GB");
  EXPECT_EQ(plan.actions[1].at.model->name, "A100-SXM4-80GB");
  EXPECT_EQ(plan.actions[3].to.instance.start, 6);
  std::string text = FormatPlan(plan);
  EXPECT_EQ(FormatPlan(ParsePlan(text, "again").value()), text);
}

TEST(PlanJsonTest, ErrorsNameTheField) {
  constexpr const char* kA100 =
      R"("gpus": [{"node": "n", "index": 1, "gpu": "A100-SXM4-80GB"}], )";
  struct Case {
    std::string json;
    const char* message;
  } cases[] = {
      {std::string("{") + kA100 +
           R"("actions": [{"id": 0, "kind": "jump", "after": []}]})",
       "p.json: actions[0].kind: unknown kind"},
      {std::string("{") + kA100 +
           R"("actions": [{"id": 0, "kind": "delete", "node": "n",
          "index": 1, "profile": "9g", "start": 0, "service": "a",
          "throughput": 1, "after": []}]})",
       "p.json: actions[0].profile: A100-SXM4-80GB has no profile 9g"},
      {std::string("{") + kA100 +
           R"("actions": [{"id": 0, "kind": "delete", "node": "n",
          "index": 1, "profile": "1g.10gb", "start": 0, "service": "a",
          "throughput": 1, "after": [4]}]})",
       "p.json: actions[0].after: 4 is not an action listed before"},
      {std::string("{") + kA100 +
           R"("actions": [{"id": 0, "kind": "migrate", "service": "a",
          "throughput": 1, "from": {"node": "n", "index": 1,
          "profile": "1g.10gb", "start": 0}, "after": []}]})",
       "p.json: actions[0].to: missing"},
      {std::string("{") + kA100 +
           R"("actions": [{"id": 0, "kind": "create", "node": "m",
          "index": 1, "profile": "1g.10gb", "start": 0, "service": "a",
          "throughput": 1, "after": []}]})",
       "p.json: actions[0].node: GPU m/1 is not listed in \"gpus\""},
      {R"({"gpus": [{"node": "n", "index": 1, "gpu": "T4"}], "actions": []})",
       "p.json: gpus[0].gpu: unknown GPU 'T4'"},
      {R"({"actions": [{"id": 0, "kind": "delete", "gpu": 1}]})",
       "p.json: gpus: missing"},
  };
  for (const Case& c : cases) {
    auto plan = ParsePlan(c.json, "p.json");
    ASSERT_FALSE(plan.ok()) << c.message;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << plan.status().message();
  }
}

}  // namespace
}  // namespace migserve::cluster
