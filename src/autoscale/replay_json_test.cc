#include "autoscale/replay_json.h"

#include <gtest/gtest.h>

namespace migserve::autoscale {
namespace {

// What replay writes, report reads back whole: every field of every run,
// move and sample.
TEST(ReplayJsonTest, ReadsWhatItWrites) {
  ReplayReport report;
  report.services = {"a", "b"};
  report.start_s = 0;
  report.end_s = 3600;
  report.policy = {12.5, 3, {{"a", 3}}, 2, 5};
  report.static_peak = {20, 0, {}, 0, 5};
  report.oracle = {10, 0, {}, 4, 4};
  report.events = {{600, Move::kUp, "a near its SLO", 3, 5, 4, 95.5, "", {""}},
                   {1800,
                    Move::kDown,
                    "quiet",
                    5,
                    4,
                    2,
                    60,
                    "late",
                    {"no room for a's copy"}}};
  report.declined = 1;
  report.samples = {{0, 3, {100, 50}}, {600, 5, {180, 50}}};
  auto read = ParseReplayJson(ReplayJson(report).dump(), "r.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(ReplayJson(*read), ReplayJson(report));
  EXPECT_EQ(read->events[1].move, Move::kDown);
  EXPECT_EQ(read->events[1].survive_dropped.why, "no room for a's copy");
}

}  // namespace
}  // namespace migserve::autoscale
