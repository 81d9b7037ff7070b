// The closed loop against a real Prometheus server (Debian's, on
// 127.0.0.1) scraping emulated Triton metrics endpoints, one per service's
// replica, labeled with the service as the pods' relabeling would: the
// autoscaler reads the rates it gives, names a service it has no series of
// (and never reads it as zero traffic), moves up at once when a rate
// rises, writes nothing in a dry run or while paused, moves down only after
// the cool-down, moves up when the observed p99 nears the SLO although the
// rate is low, and names a series that went stale. Each round is run at a
// chosen moment (Step), on wall time, since Prometheus keeps wall time.
#include "autoscale/autoscaler.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "autoscale/prometheus_client.h"
#include "autoscale/testing/local_prometheus.h"
#include "autoscale/testing/quick_loop.h"
#include "autoscale/testing/triton_endpoint.h"
#include "boundary/input_file.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "util/test_util.h"
#include "util/unix_time.h"
#include "workload/workload_yaml.h"

namespace migserve::autoscale {
namespace {

constexpr char kWorkload[] = R"(gpu: A100-SXM4-80GB
latency_budget: 1
max_procs: 1
services:
  - {name: bert-1, model: bert, throughput: 1200, latency_ms: 100}
  - {name: resnet50-1, model: resnet50, throughput: 1200, latency_ms: 100}
)";

void Sleep(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// The target's capacity for `service` (req/s).
double Capacity(const std::string& target, const std::string& service) {
  deployment::Deployment d = deployment::LoadDeployment(target).value();
  double sum = 0;
  for (const deployment::DeployedGpu& g : d.gpus) {
    for (const deployment::PlacedInstance& i : g.instances) {
      if (i.service && *i.service == service) sum += i.credit;
    }
  }
  return sum;
}

workload::Workload Workload() {
  return workload::ParseWorkload(kWorkload, "w.yaml").value();
}

profile::ProfileTable Profiles() {
  return profile::LoadProfileCsv(
             testing::SourcePath("data/profiles/a100-80gb.csv"))
      .value();
}

TEST(AutoscalerTest, FollowsPrometheusRatesAndNamesWhatItCannotSee) {
  const workload::Workload workload = Workload();
  const profile::ProfileTable profiles = Profiles();
  SizerOptions sizing;
  sizing.solve.time_limit_s = 10;
  sizing.move_time_limit_s = 5;
  Sizer sizer = Sizer::Make(workload, profiles, sizing).value();
  const std::string target = testing::TempDir() + "/target.json";
  ASSERT_TRUE(
      WriteFileAtomic(target, deployment::FormatDeployment(
                                  sizer.Deploy({1200, 1200}, nullptr).value()))
          .ok());

  auto bert = std::make_unique<TritonEndpoint>("bert");
  bert->SetRate(1000);
  // A second replica of bert-1, idle, that goes away later.
  auto idle = std::make_unique<TritonEndpoint>("bert");
  auto prometheus = LocalPrometheus::Start(
      {{bert->address(), {{"migserve_service", "bert-1"}}},
       {idle->address(), {{"migserve_service", "bert-1"}}}});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();

  std::vector<std::string> log;
  AutoscaleOptions options;
  options.prometheus = (*prometheus)->url();
  options.target = FileTarget(target);
  options.sizer = sizing;
  options.policy.window_s = 6;
  options.policy.interval_s = 1;
  options.policy.trend_s = 0;
  options.policy.cooldown_s = 4;
  options.policy.start_cost_gpu_s = 0;
  options.observe.step_s = 1;
  options.observe.rate_window = "3s";

  options.pause_file = testing::TempDir() + "/paused";
  const std::string state = testing::TempDir() + "/autoscale-state.json";
  std::remove(state.c_str());
  options.state = FileTarget(state);
  options.log = [&](const std::string& line) { log.push_back(line); };
  std::vector<std::string> events;  // "Type Reason: message"
  options.event = [&](EventType type, const std::string& reason,
                      const std::string& message) {
    events.push_back(std::string(EventTypeName(type)) + " " + reason + ": " +
                     message);
  };
  auto autoscaler = Autoscaler::Make(workload, profiles, options);
  ASSERT_TRUE(autoscaler.ok()) << autoscaler.status().ToString();
  Autoscaler& a = **autoscaler;
  auto logged = [&](const std::string& part) {
    for (const std::string& line : log) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  };
  // Scrapes enough for a full window.
  Sleep(8);

  // 1000 req/s x 1.05 headroom, on the grid, is within 85% to 100% of 1200:
  // hold. resnet50-1 has no replica scraped: named, and kept at its rate.
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kHold);
  EXPECT_TRUE(
      logged("not observed: resnet50-1: no series for "
             "sum(rate(nv_inference_count{migserve_service=\"resnet50-1\"}"
             "[3s])) and on() "
             "(count(rate(nv_inference_count{migserve_service="
             "\"resnet50-1\"}[3s])) == "
             "count(nv_inference_count{migserve_service=\"resnet50-1\"}))"));
  std::string metrics = a.Metrics();
  EXPECT_NE(
      metrics.find("migserve_autoscale_unobserved{service=\"resnet50-1\"} 1"),
      std::string::npos);
  EXPECT_NE(metrics.find("migserve_autoscale_unobserved{service=\"bert-1\"} 0"),
            std::string::npos);
  EXPECT_NE(
      metrics.find("migserve_autoscale_credit_margin{service=\"bert-1\"} 1\n"),
      std::string::npos);
  // The SLO beside the observed p99: the alert on SLO burn compares them
  // (deploy/monitoring/alerts.yaml).
  EXPECT_NE(metrics.find("migserve_autoscale_slo_ms{service=\"bert-1\"} 100\n"),
            std::string::npos);
  size_t at =
      metrics.find("migserve_autoscale_observed_rate{service=\"bert-1\"} ");
  ASSERT_NE(at, std::string::npos) << metrics;
  double observed = std::stod(metrics.substr(at + 51));
  EXPECT_NEAR(observed, 1000, 50);
  const std::string before = ReadFile(target).value();

  // A rise to 2000 req/s: up at once, the target rewritten with room for it.
  bert->SetRate(2000);
  Sleep(5);
  std::ofstream(options.pause_file) << "";
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kPaused);
  EXPECT_EQ(ReadFile(target).value(), before);
  std::filesystem::remove(options.pause_file);
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kUp);
  EXPECT_GE(Capacity(target, "bert-1"), 2000 * 1.05);
  EXPECT_GE(Capacity(target, "resnet50-1"), 1200);
  EXPECT_DOUBLE_EQ(a.required()[1], 1200);
  EXPECT_TRUE(logged("written: up: bert-1 (1200 -> "));
  const double up = Capacity(target, "bert-1");

  // A dry run decides the same way and writes nothing.
  {
    AutoscaleOptions dry = options;
    dry.dry_run = true;
    auto d = Autoscaler::Make(workload, profiles, dry).value();
    std::string now = ReadFile(target).value();
    bert->SetRate(3000);
    Sleep(5);
    EXPECT_EQ(d->Step(UnixNow()).value(), Round::kUp);
    EXPECT_EQ(ReadFile(target).value(), now);
    EXPECT_TRUE(logged("dry run, would move: up: bert-1"));
  }

  // Down to 500 req/s: low at the first round, down once low for the
  // cool-down (4 s).
  bert->SetRate(500);
  Sleep(7);
  double low_at = UnixNow();
  EXPECT_EQ(a.Step(low_at).value(), Round::kHold);
  // The cool-down under way is kept, for a restart to go on with it.
  EXPECT_EQ(ParsePolicyState(ReadFile(state).value(), state)->low_since,
            (std::map<std::string, double>{{"bert-1", low_at}}));
  Sleep(4.5);
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kDown);
  EXPECT_EQ(ParsePolicyState(ReadFile(state).value(), state).value(),
            PolicyState{});
  EXPECT_LT(Capacity(target, "bert-1"), up);
  EXPECT_GE(Capacity(target, "bert-1"), 500 * 1.05);

  // A p99 near the SLO (95 of 100 ms) moves bert-1 up although its rate
  // is what it was.
  bert->SetP99Ms(95);
  Sleep(2.5);
  double before_p99 = Capacity(target, "bert-1");
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kUp);
  EXPECT_TRUE(logged("p99 95 ms near its SLO 100 ms"));
  EXPECT_GT(Capacity(target, "bert-1"), before_p99);

  // A replica goes away: for a rate window its series still has a rate
  // but is no longer counted, and the rate gives nothing now. The service
  // is changing, not stale: nothing is said of it (and its p99 is fine
  // again, so nothing moves).
  bert->SetP99Ms(50);
  Sleep(2);
  idle.reset();
  // Until Prometheus no longer counts it but still has its rate (about a
  // second, from its first failed scrape).
  PrometheusClient client =
      PrometheusClient::Make((*prometheus)->url()).value();
  auto count = [&](const std::string& query) {
    double now = UnixNow();
    auto series = client.QueryRange("count(" + query + ")", now, now, 1);
    return series.ok() && !series->empty() && !series->front().samples.empty()
               ? series->front().samples.back().value
               : 0.0;
  };
  const std::string requests =
      "nv_inference_count{migserve_service=\"bert-1\"}";
  bool changing = false;
  for (int i = 0; i < 100 && !changing; ++i) {
    Sleep(0.05);
    changing = count(requests) == 1 && count("rate(" + requests + "[3s])") == 2;
  }
  EXPECT_TRUE(changing);
  log.clear();
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kHold);
  EXPECT_FALSE(logged("not observed: bert-1")) << ::testing::PrintToString(log);

  // The last replica stops answering: its series goes stale, named, and
  // the service is not read as idle (no move down however long it lasts).
  bert.reset();
  Sleep(3);  // within the window, so its last samples are in it
  log.clear();
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kHold);
  EXPECT_TRUE(logged("not observed: bert-1: "))
      << ::testing::PrintToString(log);
  Sleep(4.5);
  EXPECT_EQ(a.Step(UnixNow()).value(), Round::kHold);

  // Each decision was an event, and each change of what is not observed
  // (the dry run's autoscaler says its own): in order, none repeated.
  std::vector<std::string> reasons;
  for (const std::string& e : events)
    reasons.push_back(e.substr(0, e.find(':')));
  EXPECT_EQ(reasons,
            (std::vector<std::string>{
                "Warning NotObserved", "Normal Paused", "Normal Resumed",
                "Normal ScaledUp", "Warning NotObserved", "Normal WouldMove",
                "Normal ScaledDown", "Normal ScaledUp", "Warning NotObserved"}))
      << ::testing::PrintToString(events);
  EXPECT_NE(events.back().find("bert-1: stale: "), std::string::npos)
      << events.back();
  EXPECT_NE(events[3].find(target + " written: up: bert-1 (1200 -> "),
            std::string::npos)
      << events[3];
}

// Three services whose series give 1e308, NaN and -5 req/s, and one that
// rises to 3000 req/s: the round moves the one up and keeps the three at
// their rates (each named, with its value), never below what they had.
TEST(AutoscalerTest, AbsurdSeriesAreIgnoredAndTheirServicesKeptAtTheirRates) {
  const workload::Workload workload = workload::ParseWorkload(
                                          R"yaml(gpu: A100-SXM4-80GB
latency_budget: 1
max_procs: 1
services:
  - {name: huge, model: bert, throughput: 1200, latency_ms: 100,
     observe: {rate: "vector(1e308)"}}
  - {name: nan, model: resnet50, throughput: 1200, latency_ms: 100,
     observe: {rate: "vector(NaN)"}}
  - {name: negative, model: vgg19, throughput: 1200, latency_ms: 100,
     observe: {rate: "vector(-5)"}}
  - {name: rising, model: resnet101, throughput: 1200, latency_ms: 100,
     observe: {rate: "vector(3000)"}}
)yaml",
                                          "w.yaml")
                                          .value();
  const profile::ProfileTable profiles = Profiles();
  const std::string target = testing::TempDir() + "/absurd-target.json";
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  std::vector<std::string> events;
  AutoscaleOptions options = QuickLoop((*prometheus)->url(), target, &events);
  Sizer sizer = Sizer::Make(workload, profiles, options.sizer).value();
  ASSERT_TRUE(
      WriteFileAtomic(
          target, deployment::FormatDeployment(
                      sizer.Deploy({1200, 1200, 1200, 1200}, nullptr).value()))
          .ok());
  auto autoscaler = Autoscaler::Make(workload, profiles, options);
  ASSERT_TRUE(autoscaler.ok()) << autoscaler.status().ToString();
  EXPECT_EQ((*autoscaler)->Step(UnixNow()).value(), Round::kUp);
  EXPECT_EQ(
      (*autoscaler)->required(),
      (std::vector<double>{1200, 1200, 1200, (*autoscaler)->required()[3]}));
  EXPECT_GT((*autoscaler)->required()[3], 3000);
  for (const char* service : {"huge", "nan", "negative"}) {
    EXPECT_GE(Capacity(target, service), 1200) << service;
  }
  EXPECT_GE(Capacity(target, "rising"), 3000);
  ASSERT_FALSE(events.empty());
  const std::string& said = events.front();
  EXPECT_TRUE(said.starts_with("NotObserved: ")) << said;
  for (const char* part :
       {"huge: vector(1e308) gave 1e+308 req/s, which must be from 0 to "
        "1e+09; the series is ignored",
        "nan: vector(NaN) gave no number (NaN) in the window",
        "negative: vector(-5) gave -5 req/s"}) {
    EXPECT_NE(said.find(part), std::string::npos) << said;
  }
}

// bert-1's series says 1e9 req/s, then 3000: with a budget of the GPUs of
// the deployment for the workload's rates (static provisioning), neither
// move fits: the round holds and says what the move needed; the target is
// not touched. A budget the move's transition fits lets the 3000 through.
// Without a budget, 1e9 req/s stops at the solver's limit at once.
TEST(AutoscalerTest, NoMoveGoesOverTheGpuBudget) {
  auto workload_at = [](const std::string& rate) {
    return workload::ParseWorkload(fmt::format(R"yaml(gpu: A100-SXM4-80GB
latency_budget: 1
max_procs: 1
services:
  - {{name: bert-1, model: bert, throughput: 1200, latency_ms: 100,
     observe: {{rate: "vector({})"}}}}
  - {{name: resnet50-1, model: resnet50, throughput: 1200, latency_ms: 100,
     observe: {{rate: "vector(1000)"}}}}
)yaml",
                                               rate),
                                   "w.yaml")
        .value();
  };
  const profile::ProfileTable profiles = Profiles();
  const workload::Workload huge = workload_at("5e8");
  const std::string target = testing::TempDir() + "/budget-target.json";
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  std::vector<std::string> said;
  AutoscaleOptions options = QuickLoop((*prometheus)->url(), target, &said);
  const deployment::Deployment made = Sizer::Make(huge, profiles, options.sizer)
                                          .value()
                                          .Deploy({1200, 1200}, nullptr)
                                          .value();
  const std::string text = deployment::FormatDeployment(made);
  ASSERT_TRUE(WriteFileAtomic(target, text).ok());
  auto unbounded = Autoscaler::Make(huge, profiles, options);
  ASSERT_TRUE(unbounded.ok()) << unbounded.status().ToString();
  EXPECT_EQ((*unbounded)->Step(UnixNow()).value(), Round::kOverBudget);
  EXPECT_NE(said.back().find("over the limit of 100000 GPUs (no --max-gpus"),
            std::string::npos)
      << said.back();
  // Observed at the most a rate may be, wanted with headroom past it: not
  // sized (no rate holds it), held all the same.
  const workload::Workload most = workload_at("1e9");
  auto past = Autoscaler::Make(most, profiles, options);
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ((*past)->Step(UnixNow()).value(), Round::kOverBudget);
  EXPECT_NE(said.back().find("bert-1 at 1.17225e+09 req/s is past the most a "
                             "rate may be (1e+09 req/s), over the limit"),
            std::string::npos)
      << said.back();
  options.max_gpus = made.UsedGpus();
  auto a = Autoscaler::Make(huge, profiles, options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->Step(UnixNow()).value(), Round::kOverBudget);
  EXPECT_TRUE(said.back().starts_with("OverBudget: held: up: bert-1 ("))
      << said.back();
  EXPECT_NE(said.back().find("the rates need at least "), std::string::npos)
      << said.back();
  EXPECT_NE(said.back().find(fmt::format(", over the GPU budget of {} "
                                         "(--max-gpus)",
                                         made.UsedGpus())),
            std::string::npos)
      << said.back();
  EXPECT_EQ(ReadFile(target).value(), text);
  EXPECT_NE((*a)->Metrics().find(
                "migserve_autoscale_rounds_total{result=\"over_budget\"} 1"),
            std::string::npos);

  const workload::Workload rising = workload_at("3000");
  auto b = Autoscaler::Make(rising, profiles, options);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->Step(UnixNow()).value(), Round::kOverBudget);
  EXPECT_EQ(ReadFile(target).value(), text);
  options.max_gpus = 2 * made.UsedGpus() + 4;  // the transition's room
  auto c = Autoscaler::Make(rising, profiles, options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Step(UnixNow()).value(), Round::kUp);
  EXPECT_GE(Capacity(target, "bert-1"), 3000);
}

// A target serving a service the workload lacks (issue 90: the move
// deleted its replicas, the log saying "up: bert-1"): no move is written
// while it does, each round naming the service, until the workload lists
// it again.
TEST(AutoscalerTest, AServiceTheWorkloadLacksIsKeptAndNamed) {
  const profile::ProfileTable profiles = Profiles();
  const std::string target = testing::TempDir() + "/unlisted-target.json";
  const deployment::Deployment made = Sizer::Make(Workload(), profiles, {})
                                          .value()
                                          .Deploy({1200, 1200}, nullptr)
                                          .value();
  const std::string text = deployment::FormatDeployment(made);
  ASSERT_TRUE(WriteFileAtomic(target, text).ok());
  const workload::Workload only_bert =
      workload::ParseWorkload(R"yaml(gpu: A100-SXM4-80GB
latency_budget: 1
max_procs: 1
services:
  - {name: bert-1, model: bert, throughput: 1200, latency_ms: 100,
     observe: {rate: "vector(3000)"}}
)yaml",
                              "w.yaml")
          .value();
  auto prometheus = LocalPrometheus::Start({});
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  std::vector<std::string> said;
  AutoscaleOptions options = QuickLoop((*prometheus)->url(), target, &said);
  auto a = Autoscaler::Make(only_bert, profiles, options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->Step(UnixNow()).value(), Round::kUnlisted);
  ASSERT_FALSE(said.empty());
  EXPECT_TRUE(said.back().starts_with("NotInWorkload: held: up: bert-1 ("))
      << said.back();
  EXPECT_TRUE(said.back().ends_with(fmt::format(
      "; {} serves resnet50-1, which the workload lacks: a move would delete "
      "its replicas; add it to the workload, or take it out of the target "
      "yourself",
      target)))
      << said.back();
  EXPECT_EQ(ReadFile(target).value(), text);
  EXPECT_NE((*a)->Metrics().find(
                "migserve_autoscale_rounds_total{result=\"unlisted\"} 1"),
            std::string::npos);
}

// A restarted autoscaler goes on from the rates its last move made the
// target for (a deployment states them), not from the workload's.
TEST(AutoscalerTest, GoesOnFromTheRatesTheTargetWasMadeFor) {
  const workload::Workload workload = Workload();
  const profile::ProfileTable profiles = Profiles();
  Sizer sizer = Sizer::Make(workload, profiles, {}).value();
  const std::string target = testing::TempDir() + "/made-for.json";
  ASSERT_TRUE(
      WriteFileAtomic(target, deployment::FormatDeployment(
                                  sizer.Deploy({3000, 600}, nullptr).value()))
          .ok());
  AutoscaleOptions options;
  options.prometheus = "http://127.0.0.1:1";
  options.target = FileTarget(target);
  auto a = Autoscaler::Make(workload, profiles, options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)->required(), (std::vector<double>{3000, 600}));
  options.target = FileTarget(testing::TempDir() + "/no-such-target.json");
  auto missing = Autoscaler::Make(workload, profiles, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no-such-target.json"),
            std::string::npos);
}

// A target whose replica declares more than its profile row measured
// (its throughput raised, its batch time lowered: issue 76's forged
// target) is refused by name (at the start, and by each round, which reads
// it through the same ReadTarget): the policy would count capacity that is
// not there and never move up.
TEST(AutoscalerTest, ATargetOverstatingAReplicaIsRefused) {
  const workload::Workload workload = Workload();
  const profile::ProfileTable profiles = Profiles();
  Sizer sizer = Sizer::Make(workload, profiles, {}).value();
  deployment::Deployment d = sizer.Deploy({3000, 600}, nullptr).value();
  const std::string target = testing::TempDir() + "/overstated.json";
  ASSERT_TRUE(WriteFileAtomic(target, deployment::FormatDeployment(d)).ok());
  AutoscaleOptions options;
  options.prometheus = "http://127.0.0.1:1";
  options.target = FileTarget(target);
  ASSERT_TRUE(Autoscaler::Make(workload, profiles, options).ok());
  deployment::PlacedInstance& first = d.gpus[0].instances[0];
  first.credit *= 1000;
  first.latency_ms /= 1000;
  ASSERT_TRUE(WriteFileAtomic(target, deployment::FormatDeployment(d)).ok());
  auto refused = Autoscaler::Make(workload, profiles, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(
      refused.status().message(),
      fmt::format("{}: gpu 0: instance 1g.10gb@0: declares 93569.6 req/s "
                  "for 'bert-1', more than the 101.907 its profile row "
                  "measured in {}",
                  target, testing::SourcePath("data/profiles/a100-80gb.csv")));
}

}  // namespace
}  // namespace migserve::autoscale
