// The ServingTarget's status as the controller reports it: which condition
// says what in each stage of the reconcile loop, and a condition whose
// state stays keeps the time it last changed (kubectl and GitOps tools read
// lastTransitionTime as "since").
#include "manager/target_status.h"

#include <gtest/gtest.h>

namespace migserve::manager {
namespace {

using Json = nlohmann::json;

Json Progress(const std::string& state) {
  return {{"state", state},
          {"last_error", state == "error" ? "the agent on node-1 is gone" : ""},
          {"degraded", nullptr},
          {"running", state == "transition" ? 2 : 0},
          {"actions",
           {{"create", {{"ok", 3}, {"failed", 1}}}, {"delete", {{"ok", 2}}}}},
          {"services",
           {{"a", {{"capacity", 100.0}, {"required", 100.0}}},
            {"b", {{"capacity", 40.0}, {"required", 50.0}}}}},
          {"gpus_held", 3}};
}

// type -> {status, reason}
std::map<std::string, std::pair<std::string, std::string>> Conditions(
    const Json& status) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const Json& c : status["conditions"]) {
    out[c["type"]] = {c["status"], c["reason"]};
    EXPECT_EQ(c["observedGeneration"], status["observedGeneration"]);
  }
  return out;
}

using Conds = std::map<std::string, std::pair<std::string, std::string>>;

TEST(TargetStatusTest, ReadyOnlyOnceAPassEndedAtTheTargetsGeneration) {
  Json status = TargetStatusOf({Progress("transition"), 4, false}, nullptr,
                               "2026-12-03T10:00:00Z");
  EXPECT_EQ(Conditions(status),
            (Conds{{"Ready", {"False", "Transitioning"}},
                   {"Progressing", {"True", "Transitioning"}},
                   {"Degraded", {"False", "AsPlanned"}}}));
  EXPECT_EQ(status["observedGeneration"], 4);
  EXPECT_EQ(status["stage"], "transition");
  EXPECT_EQ(status["actionsDone"], 5);
  EXPECT_EQ(status["actionsFailed"], 1);
  EXPECT_EQ(status["gpusHeld"], 3);
  EXPECT_EQ(status["services"], 2);
  EXPECT_EQ(status["servicesAtTarget"], 1);

  // Idle from the last pass, but that pass was at an older generation.
  EXPECT_EQ(Conditions(TargetStatusOf({Progress("idle"), 5, false}, nullptr,
                                      "2026-12-03T10:00:00Z"))["Ready"],
            (std::pair<std::string, std::string>{"False", "Transitioning"}));

  Json ready = TargetStatusOf({Progress("idle"), 4, true}, status,
                              "2026-12-03T10:05:00Z");
  EXPECT_EQ(Conditions(ready), (Conds{{"Ready", {"True", "AtTarget"}},
                                      {"Progressing", {"False", "AtTarget"}},
                                      {"Degraded", {"False", "AsPlanned"}}}));
  // Degraded stayed False: its time is kept; the others changed.
  EXPECT_EQ(ready["conditions"][2]["lastTransitionTime"],
            "2026-12-03T10:00:00Z");
  EXPECT_EQ(ready["conditions"][0]["lastTransitionTime"],
            "2026-12-03T10:05:00Z");
  EXPECT_NE(ready["conditions"][0]["message"].get<std::string>().find(
                "1 of 2 services at their rates on 3 GPUs"),
            std::string::npos);
}

TEST(TargetStatusTest, DegradedAndFailedSayWhy) {
  Json p = Progress("idle");
  p["degraded"] = "node-1 lost: serving 7 of 8 GPUs";
  Json degraded = TargetStatusOf({p, 2, true}, nullptr, "t");
  EXPECT_EQ(Conditions(degraded),
            (Conds{{"Ready", {"False", "Degraded"}},
                   {"Progressing", {"False", "AtTarget"}},
                   {"Degraded", {"True", "ClusterCannotHoldTarget"}}}));
  EXPECT_EQ(degraded["degraded"], "node-1 lost: serving 7 of 8 GPUs");

  Json failed = TargetStatusOf({Progress("error"), 2, false}, nullptr, "t");
  EXPECT_EQ(Conditions(failed),
            (Conds{{"Ready", {"False", "ReconcileFailed"}},
                   {"Progressing", {"False", "ReconcileFailed"}},
                   {"Degraded", {"True", "ReconcileFailed"}}}));
  EXPECT_EQ(failed["conditions"][2]["message"], "the agent on node-1 is gone");
}

}  // namespace
}  // namespace migserve::manager
