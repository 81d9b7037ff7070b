#include "autoscale/policy.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace migserve::autoscale {
namespace {

// Options without rounding, trend or headroom unless a test sets them.
PolicyOptions Plain() {
  PolicyOptions o;
  o.trend_s = 0;
  o.headroom = 0;
  o.grid = 0;
  o.up_step = 0;
  return o;
}

// One service's rates, one a minute ending at `end_s`.
std::vector<Observation> Window(std::vector<double> rates, double end_s) {
  std::vector<Observation> w;
  for (size_t k = 0; k < rates.size(); ++k) {
    w.push_back(
        {end_s - 60.0 * static_cast<double>(rates.size() - 1 - k), {rates[k]}});
  }
  return w;
}

TEST(PolicyTest, WantsTheQuantilePlusTheRiseTimesTheHeadroomOnTheGrid) {
  PolicyOptions o = Plain();
  o.quantile = 0.8;
  Policy p(o, {"a"}, {100});
  // Nearest rank: the 4th of 5 sorted rates.
  EXPECT_DOUBLE_EQ(p.Want(0, Window({50, 10, 40, 30, 20}, 240)), 40);
  o.trend_s = 120;
  o.headroom = 0.5;
  Policy rising(o, {"a"}, {100});
  // Rates rise 1 req/s per minute: 39 + 2 (two minutes ahead), x 1.5.
  EXPECT_DOUBLE_EQ(rising.Want(0, Window({36, 37, 38, 39, 40}, 240)), 61.5);
  // A fall is no trend.
  EXPECT_DOUBLE_EQ(rising.Want(0, Window({40, 39, 38, 37, 36}, 240)), 58.5);
  o.grid = 0.25;
  Policy grid(o, {"a"}, {100});
  // 61.5 up to the next power of 1.25: 1.25^19 = 69.389...
  EXPECT_NEAR(grid.Want(0, Window({36, 37, 38, 39, 40}, 240)),
              std::pow(1.25, 19), 1e-9);
}

TEST(PolicyTest, MovesUpAtOnceWithTheStepAndTakesTheNearlyShortAlong) {
  PolicyOptions o = Plain();
  o.up_step = 0.1;
  Policy p(o, {"a", "b", "c"}, {100, 100, 100});
  Decision d =
      p.Decide(60, {{0, {90, 95, 50}}, {60, {101, 92, 50}}});  // a wants 101
  EXPECT_EQ(d.move, Move::kUp);
  EXPECT_DOUBLE_EQ(d.required[0], 101 * 1.1);
  EXPECT_DOUBLE_EQ(d.required[1], 95 * 1.1);  // within 10% of its rate
  EXPECT_DOUBLE_EQ(d.required[2], 100);       // low, but not for long
  EXPECT_NE(d.reason.find("up: a (100 -> 111.1 req/s)"), std::string::npos)
      << d.reason;
  EXPECT_NE(d.reason.find("along, rising: b"), std::string::npos) << d.reason;
}

// A window that says 5000 for a service required at 1000 (an autoscaler
// started on a spike) moves it to 2000, the step limit, and says what it
// wants; the next move takes the rest. Down, with a limit of half, a want
// of 100 goes to 500.
TEST(PolicyTest, AMoveChangesARateByAtMostItsStepLimit) {
  PolicyOptions o = Plain();
  o.cooldown_s = 0;
  o.up_limit = 1;
  o.down_limit = 0.5;
  Policy p(o, {"a"}, {1000});
  Decision d = p.Decide(60, {{60, {5000}}});
  EXPECT_EQ(d.move, Move::kUp);
  EXPECT_EQ(d.required, (std::vector<double>{2000}));
  EXPECT_NE(d.reason.find("a (1000 -> 2000 req/s, a step of at most 100%; "
                          "wants 5000)"),
            std::string::npos)
      << d.reason;
  p.Moved(d.required);
  EXPECT_EQ(p.Decide(120, {{120, {5000}}}).required,
            (std::vector<double>{4000}));
  Policy q(o, {"a"}, {1000});
  d = q.Decide(60, {{60, {100}}});
  EXPECT_EQ(d.move, Move::kDown);
  EXPECT_EQ(d.required, (std::vector<double>{500}));
  // Within the limits, or with none (the default up), nothing is said of
  // them.
  o.up_limit = 10;
  Policy r(o, {"a"}, {1000});
  EXPECT_EQ(r.Decide(60, {{60, {5000}}}).reason.find("step of"),
            std::string::npos);
  o.up_limit = 0;
  Policy none(o, {"a"}, {1000});
  EXPECT_EQ(none.Decide(60, {{60, {5000}}}).required,
            (std::vector<double>{5000}));
}

TEST(PolicyTest, AServiceNotObservedKeepsItsRateAndIsNeverLow) {
  PolicyOptions o = Plain();
  o.up_step = 0.1;
  o.cooldown_s = 0;
  Policy p(o, {"a", "b"}, {100, 100});
  const double unknown = std::nan("");
  EXPECT_TRUE(std::isnan(p.Want(1, {{0, {101, unknown}}})));
  // a wants more; b, never observed in the window, does not come along.
  Decision d = p.Decide(60, {{0, {90, unknown}}, {60, {101, unknown}}});
  EXPECT_EQ(d.move, Move::kUp);
  EXPECT_DOUBLE_EQ(d.required[1], 100);
  EXPECT_EQ(d.reason.find("b ("), std::string::npos) << d.reason;
  // Observed once in the window at 99: within the step, it comes along.
  d = p.Decide(120, {{60, {90, 99}}, {120, {101, unknown}}});
  EXPECT_DOUBLE_EQ(d.required[1], 99 * 1.1);
  // No series at all is not zero traffic: never a move down.
  EXPECT_EQ(p.Decide(180, {{180, {100, unknown}}}).move, Move::kHold);
}

TEST(PolicyTest, MovesUpWhenTheObservedP99NearsTheSlo) {
  PolicyOptions o = Plain();
  o.up_step = 0.1;
  o.p99_near = 0.9;
  Policy p(o, {"a", "b"}, {100, 100});
  p.SetSlos({50, 50});
  Observation now{60, {80, 80}, {44, 46}};  // b at 46 ms > 0.9 x 50
  Decision d = p.Decide(60, {now});
  EXPECT_EQ(d.move, Move::kUp);
  EXPECT_DOUBLE_EQ(d.required[0], 100);
  EXPECT_DOUBLE_EQ(d.required[1], 110);
  EXPECT_NE(d.reason.find("b (100 -> 110 req/s) p99 46 ms near its SLO 50 ms"),
            std::string::npos)
      << d.reason;
  now.p99_ms = {44, std::nan("")};
  EXPECT_EQ(p.Decide(120, {now}).move, Move::kHold);
}

TEST(PolicyTest, MovesDownOnlyAfterACoolDownBelowTheHysteresisBand) {
  PolicyOptions o = Plain();
  o.down_below = 0.8;
  o.cooldown_s = 600;
  Policy p(o, {"a", "b"}, {100, 100});
  // b wants 85: inside the band (80..100), never a move; a wants 70.
  for (double t = 0; t < 600; t += 60) {
    EXPECT_EQ(p.Decide(t, {{t, {70, 85}}}).move, Move::kHold) << t;
  }
  Decision d = p.Decide(600, {{600, {70, 85}}});
  EXPECT_EQ(d.move, Move::kDown);
  EXPECT_EQ(d.required, (std::vector<double>{70, 100}));
  // Declined: a waits a whole new cool-down.
  p.Declined(600);
  EXPECT_EQ(p.Decide(1140, {{1140, {70, 85}}}).move, Move::kHold);
  EXPECT_EQ(p.Decide(1200, {{1200, {70, 85}}}).move, Move::kDown);
  p.Moved({70, 100});
  EXPECT_EQ(p.Decide(1260, {{1260, {50, 85}}}).move, Move::kHold);
  // One moment in the band restarts the count.
  EXPECT_EQ(p.Decide(1500, {{1500, {60, 85}}}).move, Move::kHold);
  EXPECT_EQ(p.Decide(1560, {{1560, {50, 85}}}).move, Move::kHold);
  EXPECT_EQ(p.Decide(2100, {{2100, {50, 85}}}).move, Move::kHold);
  EXPECT_EQ(p.Decide(2160, {{2160, {50, 85}}}).move, Move::kDown);
}

TEST(PolicyTest, ADownMovePaysWhenItsSavingOutweighsItsStarts) {
  PolicyOptions o;
  o.cooldown_s = 1800;
  o.start_cost_gpu_s = 60;
  Policy p(o, {"a"}, {100});
  EXPECT_TRUE(p.WorthIt(10, 9, 29));   // 1,800 > 1,740 GPU-seconds
  EXPECT_FALSE(p.WorthIt(10, 9, 30));  // 1,800 = 1,800
  EXPECT_FALSE(p.WorthIt(10, 10, 0));  // saves nothing
}

// A p99 over the SLO at 800 of 1,000 credited req/s: the credits hold the
// SLO only to 80%; later decisions ask for the wanted rate over that, so
// the service does not fall back to credits that missed its SLO once its
// p99 recovers (with margins off, it does, after one cool-down).
TEST(PolicyTest, LearnsACreditMarginWhenTheP99ExceedsTheSloUnderItsCredits) {
  PolicyOptions o = Plain();
  o.up_step = 0.1;
  o.down_below = 0.85;
  o.cooldown_s = 600;
  for (double floor : {0.5, 1.0}) {
    o.margin_floor = floor;
    Policy p(o, {"a"}, {1000});
    p.SetSlos({100});
    p.SetCapacity({1000});
    Decision d = p.Decide(0, {{0, {800}, {120}}});
    EXPECT_EQ(d.move, Move::kUp);
    EXPECT_DOUBLE_EQ(d.required[0], 1100);
    if (floor < 1) {
      EXPECT_DOUBLE_EQ(p.margins()[0], 0.8);
      EXPECT_NE(d.reason.find("; credits corrected: a to 80% (p99 120 ms over "
                              "its SLO 100 ms at 800 of 1000 credited req/s)"),
                std::string::npos)
          << d.reason;
    } else {
      EXPECT_DOUBLE_EQ(p.margins()[0], 1);
      EXPECT_EQ(d.reason.find("credits corrected"), std::string::npos);
    }
    p.Moved(d.required);
    p.SetCapacity(d.required);
    // 800 req/s, p99 fine: 800 / 0.8 = 1000 is within the band of 1100.
    double first_down = -1;
    for (double t = 60; t <= 1260 && first_down < 0; t += 60) {
      if (p.Decide(t, {{t, {800}, {60}}}).move == Move::kDown) first_down = t;
    }
    // Without the margin: low from 60 s, down a cool-down later.
    EXPECT_EQ(first_down, floor < 1 ? -1 : 660) << floor;
  }
  // Never below the floor; nothing learned when the rate exceeds the
  // credits (the service is short, its credits may be right).
  o.margin_floor = 0.5;
  Policy p(o, {"a", "b"}, {1000, 1000});
  p.SetSlos({100, 100});
  p.SetCapacity({1000, 1000});
  p.Decide(0, {{0, {100, 1200}, {150, 150}}});
  EXPECT_EQ(p.margins(), (std::vector<double>{0.5, 1}));
}

// A restarted policy given what the old one remembered goes on where it
// was: the cool-down under way ends when it would have (not a whole one
// later), the learned margin holds (only falls), and services it does not
// know are left out.
TEST(PolicyTest, RecallsACoolDownUnderWayAndALearnedMargin) {
  PolicyOptions o = Plain();
  o.down_below = 0.8;
  o.cooldown_s = 600;
  Policy before(o, {"a", "b"}, {100, 100});
  for (double t = 0; t <= 300; t += 60) {
    EXPECT_EQ(before.Decide(t, {{t, {70, 85}}}).move, Move::kHold);
  }
  PolicyState kept = before.Remembered();
  EXPECT_EQ(kept.low_since, (std::map<std::string, double>{{"a", 0}}));
  EXPECT_TRUE(kept.margins.empty());
  kept.margins = {{"b", 0.5}, {"gone", 0.7}};
  kept.low_since["gone"] = 5;

  Policy after(o, {"a", "b"}, {100, 100});
  Policy afresh(o, {"a", "b"}, {100, 100});
  after.Recall(kept);
  EXPECT_EQ(after.margins(), (std::vector<double>{1, 0.5}));
  EXPECT_EQ(after.Remembered().low_since,
            (std::map<std::string, double>{{"a", 0}}));
  EXPECT_EQ(after.Remembered().margins,
            (std::map<std::string, double>{{"b", 0.5}}));
  // b at 40 req/s over its margin of 0.5 wants 80: within the band, never
  // low (40 alone would be).
  for (double t = 360; t < 600; t += 60) {
    EXPECT_EQ(after.Decide(t, {{t, {70, 40}}}).move, Move::kHold) << t;
  }
  Decision d = after.Decide(600, {{600, {70, 40}}});
  EXPECT_EQ(d.move, Move::kDown);
  EXPECT_EQ(d.required, (std::vector<double>{70, 100}));
  // Without the memory the cool-down starts at the restart.
  for (double t = 360; t < 960; t += 60) {
    EXPECT_NE(afresh.Decide(t, {{t, {70, 85}}}).move, Move::kDown) << t;
  }
  EXPECT_EQ(afresh.Decide(960, {{960, {70, 85}}}).move, Move::kDown);
  // A margin recalled never rises, nor falls below the floor.
  o.margin_floor = 0.6;
  Policy floored(o, {"b"}, {100});
  floored.Recall({{}, {{"b", 0.5}}});
  EXPECT_EQ(floored.margins(), (std::vector<double>{0.6}));
}

TEST(PolicyStateTest, RoundTripsAndNamesWhatIsWrong) {
  PolicyState state{{{"a", 1795749037.5}}, {{"b", 0.8}}};
  std::string text = FormatPolicyState(state);
  EXPECT_EQ(ParsePolicyState(text, "s.json").value(), state);
  EXPECT_EQ(ParsePolicyState("{}", "s.json").value(), PolicyState{});
  auto error = [](const std::string& text) {
    return ParsePolicyState(text, "cm/key").status().message();
  };
  EXPECT_EQ(error("[1]"), "cm/key: the policy's state: expected an object");
  EXPECT_EQ(error(R"({"margins": {"b": 1.5}})"),
            "cm/key: margins.b: 1.5 is not a share in (0, 1]");
  // Issue 92: a cool-down since 1e12 never ended, one since -1e300 ended
  // at once; a key given twice, or one the state has not, was taken.
  for (const char* when : {"\"x\"", "1e12", "-1e300", "0"}) {
    EXPECT_EQ(error(fmt::format(R"({{"low_since": {{"a": {}}}}})", when)),
              fmt::format("cm/key: low_since.a: {} is not a time from "
                          "946684800 to 4102444800 (Unix seconds, the years "
                          "2000 to 2100)",
                          nlohmann::json::parse(when).dump()));
  }
  EXPECT_EQ(error(R"({"margins": {"b": 0.5}, "margins": {"b": 1}})"),
            "cm/key:1: key 'margins' given twice in one object");
  EXPECT_EQ(error(R"({"margin": {"b": 0.5}})"),
            "cm/key: margin: unknown field (expected low_since, margins)");
  EXPECT_EQ(error(R"({"margins": [0.5]})"),
            "cm/key: margins: expected an object by service");
}

TEST(PolicyTest, OptionsOutOfRangeAreNamed) {
  PolicyOptions o;
  EXPECT_TRUE(o.Validate().ok());
  o.quantile = 1.5;
  EXPECT_EQ(o.Validate().message(), "quantile must be in (0, 1]");
  o = PolicyOptions();
  o.down_below = 0;
  EXPECT_EQ(o.Validate().message(), "down-below must be in (0, 1]");
  o = PolicyOptions();
  o.margin_floor = 0;
  EXPECT_EQ(o.Validate().message(), "margin-floor must be in (0, 1]");
  o = PolicyOptions();
  o.up_limit = -1;
  EXPECT_EQ(o.Validate().message(), "up-limit must be in [0, 1000]");
  o = PolicyOptions();
  o.down_limit = 1;
  EXPECT_EQ(o.Validate().message(), "down-limit must be in [0, 1)");
}

}  // namespace
}  // namespace migserve::autoscale
