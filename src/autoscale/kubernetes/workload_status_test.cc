// The ServingWorkload's status as the autoscaler writes it: the
// generations read and followed, Accepted and Planned with the reasons a
// user acts on, and each condition's lastTransitionTime moving only when
// its status does.
#include "autoscale/kubernetes/workload_status.h"

#include <gtest/gtest.h>

namespace migserve::autoscale {
namespace {

using Json = nlohmann::json;

TEST(WorkloadStatusTest, SaysWhatIsFollowedAndWhatHeldTheLastRound) {
  WorkloadReport report;
  report.observed = 1;
  report.followed = 1;
  report.services = 2;
  report.round =
      WorkloadReport::RoundSaid{true, "Steady", "no move this round"};
  const Json first = WorkloadStatusOf(report, nullptr, "2026-12-07T10:00:00Z");
  EXPECT_EQ(first, Json::parse(R"json({
    "observedGeneration": 1, "followedGeneration": 1, "services": 2,
    "conditions": [
      {"type": "Accepted", "status": "True", "observedGeneration": 1,
       "lastTransitionTime": "2026-12-07T10:00:00Z", "reason": "Followed",
       "message": "following generation 1 (2 services)"},
      {"type": "Planned", "status": "True", "observedGeneration": 1,
       "lastTransitionTime": "2026-12-07T10:00:00Z", "reason": "Steady",
       "message": "no move this round"}]})json"));

  // Generation 2 does not parse; the round after is held by a service the
  // workload lacks: both conditions turn False at the new time.
  report.observed = 2;
  report.refused = "servingworkload serving/w:3: services[0].throughput: bad";
  report.round = WorkloadReport::RoundSaid{
      false, "NotInWorkload", "held: ...; extra, which the workload lacks"};
  const Json second = WorkloadStatusOf(report, first, "2026-12-07T10:05:00Z");
  EXPECT_EQ(second["observedGeneration"], 2);
  EXPECT_EQ(second["followedGeneration"], 1);
  EXPECT_EQ(second["conditions"][0],
            Json::parse(R"json({"type": "Accepted", "status": "False",
              "observedGeneration": 2,
              "lastTransitionTime": "2026-12-07T10:05:00Z",
              "reason": "WorkloadInvalid",
              "message": "servingworkload serving/w:3: services[0].throughput: bad; following generation 1 (2 services)"})json"));
  EXPECT_EQ(second["conditions"][1]["status"], "False");
  EXPECT_EQ(second["conditions"][1]["reason"], "NotInWorkload");
  EXPECT_EQ(second["conditions"][1]["observedGeneration"], 1);
  EXPECT_EQ(second["conditions"][1]["lastTransitionTime"],
            "2026-12-07T10:05:00Z");

  // A status that stays keeps its time, whatever its reason says now.
  report.round = WorkloadReport::RoundSaid{false, "OverBudget", "held: ..."};
  const Json third = WorkloadStatusOf(report, second, "2026-12-07T10:09:00Z");
  EXPECT_EQ(third["conditions"][0]["lastTransitionTime"],
            "2026-12-07T10:05:00Z");
  EXPECT_EQ(third["conditions"][1]["lastTransitionTime"],
            "2026-12-07T10:05:00Z");
  EXPECT_EQ(third["conditions"][1]["reason"], "OverBudget");
}

// Refused at the start, before any generation is followed: nothing is
// said to be followed and no round to have run.
TEST(WorkloadStatusTest, ARefusalAtTheStartFollowsNothing) {
  WorkloadReport report;
  report.observed = 4;
  report.refused = "servingworkload serving/w:2: gpu: unknown GPU 'A1000'";
  EXPECT_EQ(WorkloadStatusOf(report, nullptr, "2026-12-07T10:00:00Z"),
            Json::parse(R"json({"observedGeneration": 4, "conditions": [
              {"type": "Accepted", "status": "False", "observedGeneration": 4,
               "lastTransitionTime": "2026-12-07T10:00:00Z",
               "reason": "WorkloadInvalid",
               "message": "servingworkload serving/w:2: gpu: unknown GPU 'A1000'; following no generation"}]})json"));
}

}  // namespace
}  // namespace migserve::autoscale
