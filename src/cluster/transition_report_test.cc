#include "cluster/transition_report.h"

#include <gtest/gtest.h>

namespace migserve::cluster {
namespace {

TransitionReport Sample() {
  TransitionReport r;
  r.from = "day.json";
  r.to = "night.json";
  r.seed = 7;
  r.actions = {{"create", 2}, {"local migrate", 1}};
  r.makespan_s = 40.5;
  r.planner_s = 0.25;
  r.repartition_s = 10;
  r.replicas_s = 30.5;
  r.peak_gpus = 3;
  r.plans = 1;
  r.final_gpus = 2;
  r.target_gpus = 2;
  r.services = {{"bert-1", 100, 90, 0.9, 120, 110}};
  ReportedAction repartition;
  repartition.kind = "repartition";
  repartition.gpu = "n/0";
  repartition.end_s = 10;
  repartition.text = "a0";
  ReportedAction migrate;
  migrate.id = 1;
  migrate.kind = "migrate";
  migrate.gpu = "n/1";
  migrate.start_s = 10;
  migrate.end_s = 40.5;
  migrate.ok = false;
  migrate.text = "a1";
  migrate.service = "bert-1";
  migrate.profile = "1g.10gb";
  migrate.start = 6;
  migrate.to = "n/2";
  migrate.to_start = 0;
  migrate.local = false;
  r.timeline = {repartition, migrate};
  r.capacity_history = {{0, {{"bert-1", 120}}}, {10, {{"bert-1", 90}}}};
  r.problems = {"service bert-1 dropped to 90.0% of 100"};
  r.short_services = {"bert-1"};
  return r;
}

TEST(TransitionReportTest, RoundTripsThroughJson) {
  std::string text = FormatTransitionReport(Sample());
  auto parsed = ParseTransitionReport(text, "r.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(FormatTransitionReport(*parsed), text);
  EXPECT_FALSE(parsed->ok());
  EXPECT_EQ(parsed->timeline[1].to_start, 0);
  EXPECT_EQ(parsed->timeline[1].local, false);
  EXPECT_FALSE(parsed->timeline[0].service.has_value());
  EXPECT_EQ(parsed->capacity_history[1].capacity.at("bert-1"), 90);
  EXPECT_NE(text.find("\"ok\": false"), std::string::npos);
}

TEST(TransitionReportTest, NamesTheFieldThatIsWrong) {
  nlohmann::json j = nlohmann::json::parse(FormatTransitionReport(Sample()));
  auto error = [&](const nlohmann::json& changed) {
    auto parsed = ParseTransitionReport(changed.dump(), "r.json");
    return parsed.ok() ? std::string("ok") : parsed.status().message();
  };
  nlohmann::json bad = j;
  bad["timeline"][1]["start_s"] = "soon";
  EXPECT_EQ(error(bad),
            "r.json: timeline[1].start_s: expected a number, got \"soon\"");
  bad = j;
  bad["capacity_history"][0]["capacity"]["bert-1"] = nullptr;
  EXPECT_EQ(error(bad), "r.json: capacity_history[0].capacity.bert-1: missing");
  bad = j;
  bad["ok"] = true;
  EXPECT_EQ(error(bad), "r.json: ok: disagrees with problems");
  bad = j;
  bad.erase("services");
  EXPECT_EQ(error(bad), "r.json: services: missing");
  EXPECT_NE(error(nlohmann::json::array()).find("expected an object"),
            std::string::npos);
}

}  // namespace
}  // namespace migserve::cluster
