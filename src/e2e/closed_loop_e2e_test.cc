// The closed loop on Kubernetes, every part real but the GPUs and the
// requests (issue 33): Prometheus (Debian's, on 127.0.0.1) scrapes an
// emulated Triton metrics endpoint per ready replica, found through a file
// the test keeps as Kubernetes pod discovery would, each counting its
// replica's share (by credits, as the router splits) of its service's rate
// on a scripted trace: a compressed day with a burst, then a flapping
// stretch. `migserve autoscale --workload-resource --target-resource`
// follows the workload, a ServingWorkload's spec, reads the rates and
// rewrites the target, a ServingTarget's spec; `migserve controller
// --target-resource` moves the
// stand-in cluster (API server, node agents, kubelet) there. Checked: at
// the end of each hour, the GPUs in use within a bound of the hindsight
// optimum for that hour's peak; at every tick, each service's ready
// capacity at least the rate it receives; in the flapping stretch, no more
// moves than the policy allows.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "autoscale/testing/local_prometheus.h"
#include "autoscale/testing/triton_endpoint.h"
#include "e2e/testing/kubernetes_e2e_fixture.h"
#include "kube/serving_target.h"
#include "kube/serving_workload.h"
#include "kube/yaml_json.h"
#include "optimizer/milp/milp_optimizer.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "util/test_util.h"
#include "workload/capacity_matrix.h"
#include "workload/workload_yaml.h"

namespace migserve::e2e {
namespace {

using Clock = std::chrono::steady_clock;

// Wall seconds of an hour of the compressed day (the optimized build's
// only: the sanitizer build does not run the loop, src/cli/CMakeLists.txt).
constexpr double kHourS = 15;

// The day: (hour, level), each service's rate the level times its rate in
// data/workloads/day.yaml, linear in between; a burst in hour 5. The
// cluster starts at day's deployment (level 1), so hour 1 is the lead-in
// down to the night and is not checked against the optimum.
constexpr std::pair<double, double> kDay[] = {
    {0, 0.3}, {1, 0.26},   {2, 0.32}, {3, 0.42}, {4, 0.55},
    {5, 0.7}, {5.4, 0.62}, {6, 0.5},  {7, 0.3},  {8, 0.3}};
constexpr int kHours = 8;
// Then, once the loop has settled at the night's level for kSettleS, the
// flapping stretch: the level alternates between these every kFlipS for
// kFlips flips, well within the policy's cool-down.
constexpr double kFlapLow = 0.3;
constexpr double kFlapHigh = 0.41;
constexpr double kFlipS = 2;
constexpr int kFlips = 12;
constexpr double kCooldownS = 8;
constexpr double kRateWindowS = 3;
constexpr double kSettleS = 20;
// The test's policy: room for the rise while a move runs (its moves take
// seconds against hours of 15 s), an up step that covers the next steps of
// a rise, and a down threshold well below 1 / (1 + up step), so that an up
// move on a rate observed a little high (a 3-s rate() of 2-s flips) is not
// followed by a down one at the same level.
constexpr double kHeadroom = 0.3;
constexpr double kUpStep = 0.25;
constexpr double kDownBelow = 0.65;
// How far above the optimum the policy may hold a service: the headroom
// and the grid (5%) above the rate, times the up step on a rise or, at a
// level it came down to, up to 1 / down_below before it moves down.
constexpr double kMargins =
    (1 + kHeadroom) * 1.05 * std::max(1 + kUpStep, 1 / kDownBelow);

double Level(double t) {
  double hour = t / kHourS;
  if (t >= kHours * kHourS + kSettleS) {
    int flip = static_cast<int>((t - kHours * kHourS - kSettleS) / kFlipS);
    return flip % 2 == 0 ? kFlapLow : kFlapHigh;
  }
  if (hour >= kHours) return kFlapLow;
  for (size_t k = 1; k < std::size(kDay); ++k) {
    auto [h0, l0] = kDay[k - 1];
    auto [h1, l1] = kDay[k];
    if (hour <= h1) return l0 + (l1 - l0) * (hour - h0) / (h1 - h0);
  }
  return kDay[std::size(kDay) - 1].second;
}

// The highest level of hour h (1-based): at its points or its ends.
double HourPeak(int h) {
  double peak = std::max(Level((h - 1) * kHourS), Level(h * kHourS - 1e-9));
  for (auto [hour, level] : kDay) {
    if (hour > h - 1 && hour < h) peak = std::max(peak, level);
  }
  return peak;
}

// The fewest GPUs that serve `w` with every rate times `level` (milp,
// proven on these five services).
int Optimum(const workload::Workload& w, const profile::ProfileTable& p,
            double level) {
  workload::Workload scaled = w;
  for (workload::Service& s : scaled.services) {
    s.throughput = Rate::Of(s.throughput.value() * level).value();
  }
  auto caps = workload::CapacityMatrix::Build(scaled, p, A100()).value();
  optimizer::Problem problem(scaled, A100(), caps);
  optimizer::Solution s = optimizer::milp::MilpOptimizer().Solve(
      problem, deployment::CompletionRates(problem.num_services(), 0.0), {});
  EXPECT_EQ(s.outcome, optimizer::Outcome::kOptimal);
  return static_cast<int>(s.configs.size());
}

class ClosedLoopE2eTest : public KubernetesE2eTest {
 protected:
  // Every 0.25 s until stopped: the replicas' endpoints follow the ready
  // pods (the discovery file rewritten when they change), each set to its
  // share of its service's rate now; records the GPUs in use and each
  // service whose ready capacity is below the rate it receives.
  void Traffic(const std::map<std::string, double>& rates,
               const std::map<std::string, std::string>& models,
               const std::string& discovery) {
    std::map<std::string, std::unique_ptr<autoscale::TritonEndpoint>> endpoints;
    std::string listed;
    while (!traffic_stop_) {
      double t = Seconds();
      double level = Level(t);
      struct Replica {
        std::string service;
        double throughput;
      };
      // Every replica's pod, by name: its metrics endpoint answers from
      // its creation, and it takes traffic once ready.
      std::map<std::string, Replica> replicas;
      std::map<std::string, double> capacity;  // ready, per service
      std::set<std::string> gpus;
      for (const Json& pod : server_.List(kPods)) {
        if (k8s::Annotation(pod, k8s::kAnnotationOwner) != k8s::kDefaultOwner) {
          continue;
        }
        const Json& labels = pod["metadata"]["labels"];
        gpus.insert(labels.value(k8s::kLabelNode, "") + "/" +
                    labels.value(k8s::kLabelGpu, ""));
        auto replica = k8s::ReplicaFromMetadata(pod["metadata"]);
        if (!replica) continue;
        bool ready = kube::PodReady(pod);
        replicas[pod["metadata"]["name"]] = {replica->service,
                                             ready ? replica->credit : 0};
        if (ready) capacity[replica->service] += replica->credit;
      }
      for (auto it = endpoints.begin(); it != endpoints.end();) {
        it = replicas.count(it->first) ? std::next(it) : endpoints.erase(it);
      }
      Json targets = Json::array();
      for (const auto& [name, r] : replicas) {
        auto& e = endpoints[name];
        if (!e) {
          e = std::make_unique<autoscale::TritonEndpoint>(models.at(r.service));
        }
        e->SetRate(r.throughput == 0 ? 0
                                     : level * rates.at(r.service) *
                                           r.throughput / capacity[r.service]);
        targets.push_back({{"targets", {e->address()}},
                           {"labels", {{"migserve_service", r.service}}}});
      }
      if (targets.dump() != listed) {
        listed = targets.dump();
        EXPECT_TRUE(WriteFileAtomic(discovery, listed).ok());
      }
      {
        std::lock_guard lock(mu_);
        gpus_.emplace_back(t, static_cast<int>(gpus.size()));
        const double observed = Observed(t);
        for (const auto& [service, rate] : rates) {
          if (capacity[service] < observed * rate) {
            short_.push_back(fmt::format(
                "{:.1f} s: {} ready capacity {:.6g} below its observed rate "
                "{:.6g}",
                t, service, capacity[service], observed * rate));
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  // The level a rate() over the autoscaler's window (3 s) observes at
  // `t`: the trace's mean over the window.
  static double Observed(double t) {
    double sum = 0;
    constexpr int kPoints = 30;
    for (int k = 0; k < kPoints; ++k) {
      sum += Level(std::max(0.0, t - kRateWindowS * (k + 0.5) / kPoints));
    }
    return sum / kPoints;
  }

  double Seconds() const {
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  // The GPUs in use at the last tick before `t`.
  int GpusAt(double t) {
    std::lock_guard lock(mu_);
    int gpus = -1;
    for (const auto& [at, n] : gpus_) {
      if (at <= t) gpus = n;
    }
    return gpus;
  }

  Clock::time_point start_;
  std::atomic<bool> traffic_stop_ = false;
  std::vector<std::pair<double, int>> gpus_;  // (t, GPUs in use)
  std::vector<std::string> short_;
};

TEST_F(ClosedLoopE2eTest, FollowsADayOfTrafficAndDoesNotFlap) {
  const std::string workload_path =
      testing::SourcePath("data/workloads/day.yaml");
  const std::string profiles_path =
      testing::SourcePath("data/profiles/a100-80gb.csv");
  workload::Workload workload = workload::LoadWorkload(workload_path).value();
  profile::ProfileTable profiles =
      profile::LoadProfileCsv(profiles_path).value();
  std::map<std::string, double> rates;
  std::map<std::string, std::string> models;
  for (const workload::Service& s : workload.services) {
    rates[s.name] = s.throughput.value();
    models[s.name] = s.model;
  }
  // A pod is ready half a second after it is created (a model server
  // loading its model), often before Prometheus has scraped it.
  ready_after_s_ = 0.5;
  // The hindsight optimum of each hour (before the loop: its end
  // interrupts every solve in the process).
  std::map<int, int> optimum;
  for (int h = 2; h <= kHours; ++h) {
    optimum[h] = Optimum(workload, profiles, HourPeak(h));
  }
  Start(ShippedDeployment("day"));
  const std::string map =
      kube::ServingTargetPath(kNamespace, "migserve-target");
  ASSERT_TRUE(CreateTarget("day"));
  // The intent as people write it: the workload as a ServingWorkload,
  // read by the autoscaler under the shipped Role (deploy/base/
  // autoscale.yaml).
  ASSERT_TRUE(
      kube::KubeClient(AdminConfig())
          .Create(kube::ServingWorkloadsPath(kNamespace),
                  {{"apiVersion", "migserve.io/v1alpha1"},
                   {"kind", "ServingWorkload"},
                   {"metadata", {{"name", "migserve-workload"}}},
                   {"spec", kube::YamlToJson(YAML::LoadFile(workload_path))}})
          .ok());
  std::mutex moves_mu;
  std::string last_target = Json::parse(DeploymentText("day")).dump();
  // When the target was rewritten, and the rates it was made for.
  std::vector<std::pair<double, std::map<std::string, double>>> moves;
  server_.AddObserver(
      [&](const std::string& type, const std::string& path, const Json& m) {
        if (path != map || type != "MODIFIED") return;
        std::lock_guard lock(moves_mu);
        // The autoscaler's state (an annotation) and the controller's
        // status are not moves.
        std::string text = m["spec"].dump();
        if (text == last_target) return;
        last_target = text;
        auto d = deployment::ParseDeployment(text, "target");
        ASSERT_TRUE(d.ok()) << d.status().ToString();
        // Each move says the workload's version it was made from.
        ASSERT_TRUE(d->summary && d->summary->workload) << text;
        EXPECT_EQ(*d->summary->workload,
                  (deployment::WorkloadOrigin{
                      std::string(kNamespace) + "/migserve-workload", 1}));
        std::map<std::string, double> required;
        for (const workload::Service& s : d->services) {
          required[s.name] = s.throughput.value();
        }
        moves.emplace_back(Seconds(), std::move(required));
      });

  const std::string discovery = testing::TempDir() + "/closed-loop-pods.json";
  ASSERT_TRUE(WriteFileAtomic(discovery, "[]").ok());
  auto prometheus = autoscale::LocalPrometheus::Start({}, discovery);
  ASSERT_TRUE(prometheus.ok()) << prometheus.status().ToString();
  start_ = Clock::now();
  std::thread traffic([&] { Traffic(rates, models, discovery); });

  CliResult controller, autoscaler;
  std::thread controller_loop([&] {
    controller =
        Cli({"controller", "--kubeconfig", kubeconfig_, "--target-resource",
             "migserve-target", "--journal", journal_, "--metrics-port",
             std::to_string(testing::FreePort()), "--poll-s", "0.01",
             "--resync-s", "1", "--serving", serving_});
  });
  std::thread autoscale_loop([&] {
    autoscaler = Cli({"autoscale",
                      "--workload-resource",
                      "migserve-workload",
                      "-p",
                      profiles_path,
                      "--prometheus",
                      (*prometheus)->url(),
                      "--kubeconfig",
                      autoscale_kubeconfig_,
                      "--target-resource",
                      "migserve-target",
                      "--interval",
                      "1",
                      "--window",
                      "6",
                      "--step",
                      "1",
                      "--rate-window",
                      fmt::format("{}s", kRateWindowS),
                      "--trend",
                      "0",
                      "--up-step",
                      fmt::format("{}", kUpStep),
                      "--down-below",
                      fmt::format("{}", kDownBelow),
                      "--headroom",
                      fmt::format("{}", kHeadroom),
                      "--cooldown",
                      fmt::format("{}", kCooldownS),
                      "--start-cost",
                      "0",
                      "--move-time-limit",
                      "2"});
  });
  const double flap_start = kHours * kHourS + kSettleS;
  const double flap_end = flap_start + kFlips * kFlipS;
  while (Seconds() < flap_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::raise(SIGTERM);
  controller_loop.join();
  autoscale_loop.join();
  traffic_stop_ = true;
  traffic.join();
  EXPECT_EQ(controller.code, 0) << controller.err;
  EXPECT_EQ(autoscaler.code, 0) << autoscaler.err;

  // Its ServingWorkload's status, written under the shipped Role, says
  // the generation followed and that the rounds planned from it.
  EXPECT_EQ(autoscaler.err.find("writing the status"), std::string::npos)
      << autoscaler.err;
  const Json status =
      kube::KubeClient(AdminConfig())
          .Get(kube::ServingWorkloadPath(kNamespace, "migserve-workload"))
          .value()
          .value("status", Json());
  EXPECT_EQ(status.value("followedGeneration", 0), 1) << status.dump();
  ASSERT_EQ(status.value("conditions", Json::array()).size(), 2u)
      << status.dump();
  EXPECT_EQ(status["conditions"][0]["status"], "True") << status.dump();
  EXPECT_EQ(status["conditions"][1]["type"], "Planned") << status.dump();
  EXPECT_EQ(status["conditions"][1]["status"], "True") << status.dump();

  // Never short: every service's ready capacity covered its rate.
  EXPECT_EQ(short_, std::vector<std::string>{}) << autoscaler.err;
  // At each hour's end the GPUs in use are within a bound of the hindsight
  // optimum for the hour's peak: the policy's margins above the rate, and
  // a GPU's rounding.
  std::vector<std::string> hours;
  for (int h = 2; h <= kHours; ++h) {
    int gpus = GpusAt(h * kHourS);
    hours.push_back(
        fmt::format("hour {}: {} GPUs, optimum {}", h, gpus, optimum[h]));
    EXPECT_LE(gpus, std::ceil(kMargins * optimum[h]) + 2) << hours.back();
  }
  std::lock_guard lock(moves_mu);
  // It followed the day: down to the night, up for the morning and the
  // burst, down again in the evening.
  EXPECT_GE(moves.size(), 3u) << ::testing::PrintToString(hours);
  // The flapping stretch (12 flips): no service moves down, every fall
  // lasting less than the cool-down; up moves only as the window fills
  // with the higher level, at most two (one that the rate-window's ramp
  // leaves a little short, one more), never back and forth.
  int flapping = 0;
  std::map<std::string, double> last =
      moves.empty() ? std::map<std::string, double>{} : moves.front().second;
  for (const auto& [at, required] : moves) {
    if (at > flap_start) {
      ++flapping;
      for (const auto& [service, rate] : required) {
        EXPECT_GE(rate, last[service]) << service << " moved down at " << at;
      }
    }
    last = required;
  }
  EXPECT_LE(flapping, 2);
  std::cerr << fmt::format("{}; {} moves, {} in the flapping stretch\n",
                           fmt::join(hours, "; "), moves.size(), flapping);
}

}  // namespace
}  // namespace migserve::e2e
