#include "cluster/plan_text.h"

#include <gtest/gtest.h>

#include "mig/gpu_catalog.h"

namespace migserve::cluster {
namespace {

TEST(PlanTextTest, ActionsInStagesWithNodeNames) {
  const mig::GpuModel* a100 =
      mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  mig::Instance one{a100->FindProfile("1g.10gb"), 2};
  Action del;
  del.id = 4;
  del.kind = ActionKind::kDelete;
  del.at = {{"gpu-a1", 3}, a100, one};
  del.replica.service = "bert";
  Action create = del;
  create.id = 9;
  create.kind = ActionKind::kCreate;
  create.at.gpu = {"gpu-b2", 0};
  create.after = {4};
  TransitionPlan plan{{del, create}};
  EXPECT_EQ(FormatPlanText(plan),
            "2 actions in 2 stages\n"
            "stage 1 of 2: 1 action\n"
            "  action 4 (delete bert on GPU gpu-a1/3 1g.10gb@2)\n"
            "stage 2 of 2: 1 action\n"
            "  action 9 (create bert on GPU gpu-b2/0 1g.10gb@2), after 4\n");
}

}  // namespace
}  // namespace migserve::cluster
