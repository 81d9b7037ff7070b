#include "controller/journal.h"

#include <gtest/gtest.h>

#include "util/test_util.h"

namespace migserve::controller {
namespace {

TEST(JournalTest, KeepsThePlanAndActionStatesAcrossReopen) {
  std::string path = testing::TempDir() + "/journal.db";
  {
    auto journal = Journal::Open(path).value();
    int version = journal->BeginPlan("target", "{\"actions\": []}").value();
    EXPECT_EQ(version, 1);
    ASSERT_TRUE(journal->Mark(version, 0, ActionState::kStarted).ok());
    ASSERT_TRUE(journal->Mark(version, 0, ActionState::kDone).ok());
    ASSERT_TRUE(journal->Mark(version, 1, ActionState::kStarted).ok());
  }
  auto journal = Journal::Open(path).value();
  std::optional<JournaledPlan> plan = journal->Current().value();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->target, "target");
  EXPECT_EQ(plan->plan_json, "{\"actions\": []}");
  EXPECT_EQ(plan->actions,
            (std::map<int, ActionState>{{0, ActionState::kDone},
                                        {1, ActionState::kStarted}}));
  ASSERT_TRUE(journal->FinishPlan(plan->version).ok());
  EXPECT_FALSE(journal->Current().value().has_value());
  EXPECT_EQ(journal->BeginPlan("t2", "{}").value(), 2);
}

TEST(JournalTest, ReportsAnUnopenableFile) {
  auto journal = Journal::Open("/nonexistent-dir/journal.db");
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace migserve::controller
