#include "autoscale/replay.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/profile_csv.h"
#include "queueing/credit_cache.h"
#include "util/build_id.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::autoscale {
namespace {

struct Inputs {
  RateTrace trace;
  workload::Workload workload;
  profile::ProfileTable profiles;
};

Inputs Load(const std::string& trace) {
  return {LoadRateTrace(testing::SourcePath("data/traces/" + trace)).value(),
          workload::LoadWorkload(
              testing::SourcePath("data/workloads/normal-1.yaml"))
              .value(),
          profile::LoadProfileCsv(
              testing::SourcePath("data/profiles/a100-80gb.csv"))
              .value()};
}

// The credits of every rate the replays ask for, kept where ctest keeps
// the suite's ($MIGSERVE_CREDIT_CACHE), as the migserve program would.
class ReplayTest : public ::testing::Test {
 protected:
  ReplayTest()
      : cache_(queueing::DefaultCreditCachePath(), BuildId(), nullptr) {
    queueing::SetCreditCache(&cache_);
  }
  ~ReplayTest() override { queueing::SetCreditCache(nullptr); }

 private:
  queueing::CreditCache cache_;
};

// The shipped day under the default budget (the static peak's GPUs): the
// policy follows it within 10% of the GPU-hours of the oracle that moves
// for free, never holds more GPUs than the budget, transitions included,
// and no service's capacity is ever below the rate it receives. Each move's
// search is bounded by nodes (--move-nodes), not by the clock: the day
// replays to the same 2,864 GPU-hours (the oracle's 2,609) at any load,
// in about 35 s.
TEST_F(ReplayTest, TheDiurnalDayStaysNearTheOracleInsideTheBudgetNeverShort) {
  if (testing::kAddressSanitizer) {
    // A whole day of sizing and moves: 210 s under ASan, the longest test
    // there, for code the shorter replays below run under it too.
    GTEST_SKIP() << "a day's replay: the optimized build checks it";
  }
  Inputs in = Load("normal-1-diurnal.csv");
  ReplayOptions options;
  ReplayReport r = Replay(in.trace, in.workload, in.profiles, options).value();
  EXPECT_EQ(r.services.size(), 24u);
  EXPECT_EQ(r.end_s - r.start_s, 86400);
  EXPECT_EQ(r.max_gpus, r.static_peak.peak_gpus);
  EXPECT_LE(r.policy.gpu_hours, 1.1 * r.oracle.gpu_hours)
      << r.policy.gpu_hours << " vs " << r.oracle.gpu_hours;
  EXPECT_LE(r.policy.peak_gpus, r.max_gpus);
  EXPECT_EQ(r.over_budget, 0);
  EXPECT_EQ(r.policy.short_minutes, 0);
  EXPECT_TRUE(r.policy.short_minutes_by_service.empty());
  EXPECT_EQ(r.static_peak.short_minutes, 0);
  EXPECT_EQ(r.oracle.short_minutes, 0);
  // The oracle moves for free and is the floor of what following costs.
  EXPECT_LT(r.oracle.gpu_hours, r.policy.gpu_hours);
  EXPECT_EQ(r.policy.transitions, static_cast<int>(r.events.size()));
  for (const ReplayEvent& e : r.events) {
    EXPECT_EQ(e.problem, "") << e.time_s << " " << e.reason;
  }
  // Samples in time order, from the start.
  ASSERT_FALSE(r.samples.empty());
  EXPECT_EQ(r.samples.front().time_s, r.start_s);
  for (size_t k = 1; k < r.samples.size(); ++k) {
    EXPECT_LE(r.samples[k - 1].time_s, r.samples[k].time_s) << k;
  }
}

// Rates that flap every 20 minutes between two levels: one move up to the
// higher, none back down (the lower never lasts a cool-down).
TEST_F(ReplayTest, AFlappingTraceMovesAtMostOncePerHour) {
  Inputs in = Load("normal-1-flapping.csv");
  ReplayReport r =
      Replay(in.trace, in.workload, in.profiles, ReplayOptions()).value();
  double hours = (r.end_s - r.start_s) / 3600;
  EXPECT_EQ(hours, 6);
  EXPECT_GE(r.policy.transitions, 1);
  EXPECT_LE(r.policy.transitions, hours);
  for (const ReplayEvent& e : r.events) EXPECT_EQ(e.move, Move::kUp);
}

// Two services that rise fourfold over two hours: under a budget one GPU
// below the unbounded policy's peak, the move that would go over goes to
// the trace's peaks instead, and the policy's cluster never holds more,
// transitions included; a budget the first moment does not fit is
// refused.
TEST_F(ReplayTest, NoMoveGoesOverTheBudget) {
  RateTrace trace = ParseRateTrace(R"(time_s,service,rate
0,bert-1,1000
0,resnet50-1,1000
1800,bert-1,2000
1800,resnet50-1,2000
3600,bert-1,4000
3600,resnet50-1,4000
7200,bert-1,4000
7200,resnet50-1,4000
)",
                                   "rise.csv")
                        .value();
  workload::Workload workload = workload::ParseWorkload(R"(gpu: A100-SXM4-80GB
services:
  - {name: bert-1, model: bert, throughput: 4000, latency_ms: 100}
  - {name: resnet50-1, model: resnet50, throughput: 4000, latency_ms: 100}
)",
                                                        "rise.yaml")
                                    .value();
  profile::ProfileTable profiles =
      profile::LoadProfileCsv(
          testing::SourcePath("data/profiles/a100-80gb.csv"))
          .value();
  ReplayOptions options;
  options.max_gpus = 0;
  ReplayReport free = Replay(trace, workload, profiles, options).value();
  EXPECT_EQ(free.max_gpus, 0);
  EXPECT_EQ(free.over_budget, 0);
  options.max_gpus = free.policy.peak_gpus - 1;
  ReplayReport held = Replay(trace, workload, profiles, options).value();
  EXPECT_EQ(held.max_gpus, options.max_gpus);
  // The move that would have gone over went to the trace's peaks.
  EXPECT_TRUE(std::any_of(
      held.events.begin(), held.events.end(), [&](const ReplayEvent& e) {
        return e.reason.ends_with(fmt::format(
            "; near or over the GPU budget of {}: to the trace's peaks "
            "instead",
            options.max_gpus));
      }));
  EXPECT_LE(held.policy.peak_gpus, options.max_gpus);
  for (const ReplaySample& s : held.samples) {
    EXPECT_LE(s.gpus, options.max_gpus) << s.time_s;
  }
  options.max_gpus = held.samples.front().gpus - 1;
  EXPECT_EQ(Replay(trace, workload, profiles, options).status().message(),
            fmt::format("replay: the trace's first moment needs {} GPUs, "
                        "more than the budget of {} (--max-gpus)",
                        held.samples.front().gpus, options.max_gpus));
}

TEST(ReplayErrorsTest, TheTraceAndTheWorkloadMustNameTheSameServices) {
  Inputs in = Load("normal-1-flapping.csv");
  workload::Workload fewer = in.workload;
  fewer.services.pop_back();
  EXPECT_EQ(Replay(in.trace, fewer, in.profiles, {}).status().message(),
            testing::SourcePath("data/traces/normal-1-flapping.csv") +
                ":25: service: densenet121-3 is not in the workload");
  RateTrace less =
      ParseRateTrace("time_s,service,rate\n0,bert-1,10\n60,bert-1,10\n",
                     "t.csv")
          .value();
  EXPECT_EQ(Replay(less, in.workload, in.profiles, {}).status().message(),
            "replay: the trace has no rate for service densenet121-1 of the "
            "workload");
  ReplayOptions bad;
  bad.policy.interval_s = 0;
  EXPECT_EQ(Replay(in.trace, in.workload, in.profiles, bad).status().message(),
            "interval must be > 0 seconds");
}

}  // namespace
}  // namespace migserve::autoscale
