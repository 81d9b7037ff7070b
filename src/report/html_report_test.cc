#include "report/html_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autoscale/replay_json.h"
#include "deployment/deployment_json.h"
#include "report/report_inputs.h"
#include "report/svg.h"
#include "serving/serve_json.h"
#include "util/test_util.h"

namespace migserve::report {
namespace {

using testing::CountMatches;
using testing::SourcePath;

// The drawn width of the bar labelled `label`; -1 if there is none.
double BarWidth(const std::string& html, const std::string& label) {
  const std::string at = fmt::format(
      "data-label=\"{}\" x=\"200\" y=\"3\" "
      "width=\"",
      label);
  size_t k = html.find(at);
  return k == std::string::npos ? -1 : std::stod(html.substr(k + at.size()));
}

int Instances(const deployment::Deployment& d) {
  int n = 0;
  for (const auto& g : d.gpus) n += static_cast<int>(g.instances.size());
  return n;
}

TEST(HtmlReportTest, EveryInstanceIsOneElementWithItsPlace) {
  auto day =
      deployment::LoadDeployment(SourcePath("data/deployments/day.json"));
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  ReportInput in;
  in.title = "day";
  in.deployment = &*day;
  std::string html = RenderReport(in);
  EXPECT_EQ(CountMatches(html, "<g class=\"instance"), Instances(*day));
  EXPECT_EQ(CountMatches(html, "<g class=\"gpu"),
            static_cast<int>(day->gpus.size()));
  // The first GPU's first instance, by its attributes.
  const auto& g = day->gpus[0];
  const auto& i = g.instances[0];
  EXPECT_EQ(
      CountMatches(html, fmt::format("data-gpu=\"{}\" data-profile=\"{}\" "
                                     "data-start=\"{}\" data-service=\"{}\"",
                                     g.index ? *g.index : g.id, i.profile,
                                     i.start, i.service.value_or(""))),
      1);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
}

TEST(HtmlReportTest, LargeFleetsAreDrawnSmallWithEveryInstance) {
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  d.services = {{"s<1>", "m", Rate::Of(10).value(), 100, 0}};
  for (int k = 0; k < 150; ++k) {
    deployment::DeployedGpu g;
    g.id = k;
    g.node = fmt::format("n{:02}", k / 8);
    g.index = k % 8;
    g.instances = {{"3g.40gb", 0, "s<1>", 8, 1, 10, 5},
                   {"4g.40gb", 4, std::nullopt, 0, 1, 0, 0}};
    d.gpus.push_back(g);
  }
  ReportInput in;
  in.deployment = &d;
  std::string html = RenderReport(in);
  EXPECT_EQ(CountMatches(html, "<figure class=\"mini-node\""), 19);  // 150 / 8
  EXPECT_EQ(CountMatches(html, "<g class=\"instance s0\""), 150);
  EXPECT_EQ(CountMatches(html, "<g class=\"instance idle\""), 150);
  EXPECT_EQ(CountMatches(html, "<section class=\"node\""), 0);
  EXPECT_NE(html.find("data-node=\"n18\" data-gpu=\"5\" "
                      "data-profile=\"4g.40gb\" data-start=\"4\" "
                      "data-service=\"\""),
            std::string::npos);
  EXPECT_NE(html.find("data-service=\"s&lt;1&gt;\""), std::string::npos);
  EXPECT_EQ(html.find("s<1>"), std::string::npos) << "unescaped";
  in.compact_above = 150;
  html = RenderReport(in);
  EXPECT_EQ(CountMatches(html, "<figure class=\"mini-node\""), 0);
  EXPECT_EQ(CountMatches(html, "<section class=\"node\""), 19);
  EXPECT_EQ(CountMatches(html, "<g class=\"instance"), 300);
}

TEST(HtmlReportTest, TransitionHasOneBarPerActionAndTheFloors) {
  auto day =
      deployment::LoadDeployment(SourcePath("data/deployments/day.json"));
  auto night =
      deployment::LoadDeployment(SourcePath("data/deployments/night.json"));
  ASSERT_TRUE(day.ok() && night.ok());
  nlohmann::json sim = {
      {"ok", true},
      {"makespan_s", 40.0},
      {"peak_gpus", 3},
      {"final_gpus", 2},
      {"short_services", nlohmann::json::array()},
      {"services", {{{"name", "bert-1"}, {"floor", 100.0}, {"lowest", 90.0}}}},
      {"timeline",
       {{{"id", 0},
         {"kind", "delete"},
         {"gpu", "n/0"},
         {"service", "bert-1"},
         {"start_s", 0.0},
         {"end_s", 10.0},
         {"ok", true},
         {"text", "a0"}},
        {{"id", 1},
         {"kind", "migrate"},
         {"gpu", "n/1"},
         {"to", "n/2"},
         {"service", "bert-1"},
         {"start_s", 10.0},
         {"end_s", 40.0},
         {"ok", true},
         {"text", "a1"}}}},
      {"capacity_history",
       {{{"time_s", 0.0}, {"capacity", {{"bert-1", 120.0}}}},
        {{"time_s", 10.0}, {"capacity", {{"bert-1", 90.0}}}}}}};
  ReportInput in;
  in.deployment = &*night;
  in.before = &*day;
  in.simulation = cluster::ParseTransitionReport(sim.dump(), "sim").value();
  std::string html = RenderReport(in);
  EXPECT_EQ(CountMatches(html, "<rect class=\"action"), 2);
  EXPECT_EQ(CountMatches(html, "data-kind=\"migrate\""), 1);
  EXPECT_NE(html.find("lowest 90 req/s = 90% of floor 100"), std::string::npos);
  EXPECT_NE(html.find("class=\"bad\">lowest"), std::string::npos);
  EXPECT_NE(html.find("<td>n/1</td><td>n/2</td>"), std::string::npos);
  // day serves on 18 GPUs, night on 6 of them: 12 freed.
  EXPECT_NE(html.find("data-freed=\"12\" data-taken=\"0\""), std::string::npos);
  // A placed GPU is named as the plan's actions name it, node/index.
  night->gpus[0].node = "n";
  night->gpus[0].index = 1;
  EXPECT_NE(RenderReport(in).find("<text class=\"gpu-label\" x=\"4\" "
                                  "y=\"18\">n/1</text>"),
            std::string::npos);
  sim.erase("timeline");
  auto parsed = cluster::ParseTransitionReport(sim.dump(), "sim.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "sim.json: timeline: missing");
}

TEST(HtmlReportTest, CompareAndServeChartsHaveABarPerRow) {
  auto night =
      deployment::LoadDeployment(SourcePath("data/deployments/night.json"));
  ASSERT_TRUE(night.ok());
  ReportInput in;
  in.deployment = &*night;
  in.supply = {{"bert-1", 100, 120}, {"resnet50-1", 50, 40}};
  nlohmann::json compare = {{"rows",
                             {{{"name", "whole"},
                               {"kind", "algorithm"},
                               {"gpus", 14},
                               {"status", "feasible"}},
                              {{"name", "all-1g"},
                               {"kind", "algorithm"},
                               {"gpus", nullptr},
                               {"status", "infeasible"},
                               {"note", "b does not fit"}},
                              {{"name", "relaxed"},
                               {"kind", "bound"},
                               {"gpus", 6},
                               {"status", "bound"},
                               {"note", "MIG rules ignored"}}}}};
  in.compare = ParseCompareJson(compare.dump(), "c.json").value();
  nlohmann::json serve = {{"services",
                           {{{"service", "bert-1"},
                             {"slo_ms", 100.0},
                             {"p50_ms", 40.0},
                             {"p90_ms", 60.0},
                             {"p99_ms", 120.0},
                             {"within_slo", 0.98}},
                            {{"service", "chat"},
                             {"slo_ms", 30000.0},
                             {"p50_ms", 9000.0},
                             {"p90_ms", 11000.0},
                             {"p99_ms", 12000.0},
                             {"within_slo", 1.0},
                             {"llm",
                              {{"ttft_slo_ms", 2000.0},
                               {"tpot_slo_ms", 30.0},
                               {"ttft_p50_ms", 130.0},
                               {"ttft_p99_ms", 400.0},
                               {"tpot_p50_ms", 24.0},
                               {"tpot_p99_ms", 29.5},
                               {"kv_occupancy", 0.3},
                               {"basis", "measured"}}}}}}};
  in.serve = serving::ParseServeJson(serve.dump(), "s.json").value();
  std::string html = RenderReport(in);
  // Compare's two, each service's p50, p90 and p99, and the LLM service's
  // TTFT and TPOT p50 and p99 against their SLOs.
  EXPECT_EQ(CountMatches(html, "<rect class=\"bar\""), 2 + 3 + 3 + 3 + 4);
  EXPECT_NE(html.find("chat TPOT p99"), std::string::npos);
  EXPECT_NE(html.find("29.5 ms (SLO 30 ms; measured)"), std::string::npos);
  EXPECT_NE(html.find("120 of 100 req/s (120%)"), std::string::npos);
  EXPECT_NE(html.find("40 of 50 req/s (80%)"), std::string::npos);
  EXPECT_NE(html.find("cannot serve: b does not fit"), std::string::npos);
  EXPECT_NE(html.find("14 GPUs (feasible)"), std::string::npos);
  EXPECT_NE(html.find("120 ms (SLO 100 ms), 98% within"), std::string::npos);
  // Each bar against its own SLO or required rate (issue 75: a 100 ms bar
  // beside a 30,000 ms SLO was zero-width): the reference at 2/3 of 420.
  EXPECT_NEAR(BarWidth(html, "bert-1 p99"), 120.0 / 150 * 420, 0.05);
  EXPECT_NEAR(BarWidth(html, "chat p99"), 12000.0 / 45000 * 420, 0.05);
  EXPECT_NEAR(BarWidth(html, "chat TPOT p99"), 29.5 / 45 * 420, 0.05);
  EXPECT_NEAR(BarWidth(html, "resnet50-1"), 40.0 / 75 * 420, 0.05);
  EXPECT_NEAR(BarWidth(html, "whole"), 420, 0.05);  // compare: one axis
  auto short_serve = serving::ParseServeJson(
      nlohmann::json{{"services", {{{"service", "bert-1"}}}}}.dump(), "s.json");
  ASSERT_FALSE(short_serve.ok());
  EXPECT_EQ(short_serve.status().message(),
            "s.json: services[0].p50_ms: missing");
  auto short_compare = ParseCompareJson(
      nlohmann::json{{"rows", {{{"kind", "bound"}}}}}.dump(), "c.json");
  ASSERT_FALSE(short_compare.ok());
  EXPECT_EQ(short_compare.status().message(), "c.json: rows[0].name: missing");
}

// A day of two services, one move up and one down, drawn alone: the runs'
// table, each move on the GPU line where the replay says, each service's
// capacity and rate, the minutes short the replay measured.
TEST(HtmlReportTest, FortyEightServicesLookDistinctAndEachCanBeShownAlone) {
  std::vector<std::string> services;
  for (int k = 0; k < 49; ++k) services.push_back(fmt::format("svc-{}", k));
  Palette palette(services);
  std::set<std::pair<std::string, int>> looks;
  for (int k = 0; k < 48; ++k) {
    looks.emplace(palette.Colour(services[k]), palette.Pattern(services[k]));
  }
  EXPECT_EQ(looks.size(), 48u);
  EXPECT_EQ(palette.Pattern("svc-11"), 0);
  EXPECT_EQ(palette.Pattern("svc-12"), 1);
  EXPECT_EQ(palette.Pattern("svc-47"), 3);
  // The 49th looks like the first.
  EXPECT_EQ(palette.Colour("svc-48"), palette.Colour("svc-0"));
  EXPECT_EQ(palette.Pattern("svc-48"), 0);
  EXPECT_EQ(palette.Key("svc-13"), "s13");
  EXPECT_EQ(palette.Key("unknown"), "");
  EXPECT_EQ(PatternOverlay(palette, "svc-3", 0, 0, 10, 10), "");
  EXPECT_EQ(PatternOverlay(palette, "svc-25", 1, 2, 3, 4),
            "<rect class=\"pattern\" x=\"1\" y=\"2\" width=\"3\" "
            "height=\"4\" fill=\"url(#pattern-2)\"/>");

  // In a report: a legend link, an anchor and a filter rule per service;
  // each instance carries its service's key.
  deployment::Deployment d;
  d.gpu = "A100-SXM4-80GB";
  deployment::DeployedGpu g;
  for (int k = 0; k < 14; ++k) {
    d.services.push_back(
        {fmt::format("svc-{}", k), "m", Rate::Of(10).value(), 100, 0});
    g.instances = {{"7g.80gb", 0, fmt::format("svc-{}", k), 8, 1, 10, 5}};
    g.id = k;
    d.gpus.push_back(g);
  }
  ReportInput in;
  in.deployment = &d;
  std::string html = RenderReport(in);
  EXPECT_EQ(CountMatches(html, "<a class=\"legend-item\" href=\"#only-s"), 14);
  EXPECT_EQ(CountMatches(html, "<i class=\"anchor\" id=\"only-s"), 14);
  EXPECT_EQ(CountMatches(html, ":target ~ main .instance.s"), 14);
  EXPECT_EQ(CountMatches(html, "<g class=\"instance s13\""), 1);
  EXPECT_EQ(CountMatches(html, "fill=\"url\\(#pattern-1\\)\""), 2);
  EXPECT_NE(html.find("data-pattern=\"1\"><span class=\"swatch p1\""),
            std::string::npos);
}

constexpr const char* kReplayedDay = R"({
  "services": ["a", "b"], "start_s": 0, "end_s": 3600,
  "policy": {"gpu_hours": 3.5, "peak_gpus": 5, "transitions": 2,
             "short_minutes": 6.5, "short_minutes_by_service": {"a": 6.5}},
  "static_peak": {"gpu_hours": 5, "peak_gpus": 5, "transitions": 0,
                  "short_minutes": 0, "short_minutes_by_service": {}},
  "oracle": {"gpu_hours": 3, "peak_gpus": 4, "transitions": 0,
             "short_minutes": 0, "short_minutes_by_service": {}},
  "declined": 0,
  "events": [
    {"time_s": 600, "move": "up", "reason": "up: a <wants> more",
     "gpus_before": 2, "gpus_after": 4, "pod_starts": 3, "makespan_s": 100,
     "problem": ""},
    {"time_s": 2400, "move": "down", "reason": "down: a wants less",
     "gpus_before": 4, "gpus_after": 3, "pod_starts": 1, "makespan_s": 100,
     "problem": ""}],
  "samples": [
    {"time_s": 0, "gpus": 2, "capacity": [100, 50]},
    {"time_s": 600, "gpus": 5, "capacity": [100, 50]},
    {"time_s": 700, "gpus": 4, "capacity": [200, 80]},
    {"time_s": 2400, "gpus": 4, "capacity": [200, 80]},
    {"time_s": 2500, "gpus": 3, "capacity": [150, 80]}]
})";

TEST(HtmlReportTest, AReplayedDayDrawsEveryMoveAndEveryService) {
  auto day = autoscale::ParseReplayJson(kReplayedDay, "day.json");
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  ReportInput in;
  in.title = "replayed";
  in.replay = *day;
  in.rates = ObservedRates{{"b", "a"},
                           {0, 300, 1800, 3600},
                           {{40, 90}, {40, 150}, {40, 120}, {40, 120}}};
  std::string html = RenderReport(in);
  EXPECT_EQ(html.find("id=\"summary\""), std::string::npos);
  EXPECT_EQ(CountMatches(html, "<tr data-run="), 3);
  EXPECT_NE(html.find("<tr data-run=\"static peak\" data-gpu-hours=\"5\">"),
            std::string::npos);
  // 1 - 3.5 / 5 of static's GPU-hours saved; no budget.
  EXPECT_NE(html.find("data-saved=\"30.00\" data-max-gpus=\"0\""),
            std::string::npos);
  EXPECT_EQ(html.find("Under a budget"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"replay-gpus\" data-peak=\"5\" "
                      "data-static=\"5\""),
            std::string::npos);
  EXPECT_EQ(CountMatches(html,
                         "<line class=\"move up\" data-time=\"600\" "
                         "data-gpus-before=\"2\" data-gpus-after=\"4\""),
            1);
  EXPECT_EQ(CountMatches(html, "<line class=\"move down\" data-time=\"2400\""),
            1);
  // Every service's picture marks both moves; the reason is escaped.
  EXPECT_EQ(CountMatches(html, "<line class=\"move-mark "), 2 * 2);
  EXPECT_NE(html.find("up: a &lt;wants&gt; more"), std::string::npos);
  EXPECT_NE(html.find("data-service=\"a\" data-short-minutes=\"6.5\""),
            std::string::npos);
  EXPECT_NE(html.find("data-service=\"b\" data-short-minutes=\"0\""),
            std::string::npos);
  EXPECT_EQ(CountMatches(html, "<polyline class=\"rate-line\""), 2);
  // The GPU line: a point per change (2, 5, 4, 3; the sample at 2400
  // keeps 4) and its corners, then the end.
  EXPECT_EQ(CountMatches(html, "<polyline class=\"gpus-line\""), 1);
  size_t line = html.find("<polyline class=\"gpus-line\" points=\"");
  std::string points = html.substr(line, html.find('"', line + 40) - line);
  EXPECT_EQ(CountMatches(points, ","), 1 + 2 * 3 + 1) << points;
  // The GPU axis: peak 5 drawn to 5.5, a value every 2 GPUs from 0.
  EXPECT_EQ(CountMatches(html, "<text class=\"tick y-tick\""), 3);
  for (const char* value : {">0</text>", ">2</text>", ">4</text>"}) {
    EXPECT_EQ(CountMatches(html, std::string("text-anchor=\"end\"") + value), 1)
        << value;
  }
  // Without the trace, no rate is drawn; a budget is said.
  in.rates.reset();
  in.replay->max_gpus = 6;
  in.replay->over_budget = 2;
  EXPECT_NE(RenderReport(in).find("Under a budget of 6 GPUs (its peak 5, "
                                  "transitions included), 2 moves were not "
                                  "made."),
            std::string::npos);
  EXPECT_EQ(CountMatches(RenderReport(in), "<polyline class=\"rate-line\""), 0);
}

TEST(HtmlReportTest, AReplayThatDoesNotAddUpIsNamed) {
  std::string text = kReplayedDay;
  std::string wrong = text;
  wrong.replace(wrong.find("[150, 80]"), 9, "[150]");
  auto r = autoscale::ParseReplayJson(wrong, "day.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "day.json: samples[4].capacity: 1 values for 2 services");
  wrong = text;
  wrong.replace(wrong.find("\"down\""), 6, "\"side\"");
  r = autoscale::ParseReplayJson(wrong, "day.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "day.json: events[1].move: expected up or down, got side");
  wrong = text;
  wrong.replace(wrong.find("{\"a\": 6.5}"), 10, "{\"a\": \"x\"}");
  r = autoscale::ParseReplayJson(wrong, "day.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "day.json: policy.short_minutes_by_service.a: expected a "
                "number"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace migserve::report
