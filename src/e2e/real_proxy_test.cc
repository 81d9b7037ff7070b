// The p99 promise behind the real proxy (docs/serving.md, "The proxy"): a
// deployment optimized for `router: proxy` is served by two real nginx
// instances, configured by migserve's control plane code, in front of
// emulated replicas (dynamic batchers holding a batch for the profile's
// S(b), slowed down kScale times so that timer noise on a loaded machine
// stays small against it) under open-loop Poisson load at the required
// rate, also slowed kScale times. Each service's measured p99 must meet
// its SLO and lie within 25% of `migserve serve --routing proxy`'s; the same
// deployment behind nginx's weighted random balancer must miss where `serve
// --routing random` says it misses by more than that 25%.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "kubernetes/routing/proxy_routes.h"
#include "profile/capacity.h"
#include "profile/profile_csv.h"
#include "profile/testing/shipped.h"
#include "proxy/control_plane.h"
#include "proxy/nginx_process.h"
#include "proxy/testing/emulated_replica.h"
#include "proxy/testing/local_nginx.h"
#include "proxy/testing/open_loop_load.h"
#include "proxy/testing/proxy_values.h"
#include "proxy/testing/ready_pod.h"
#include "queueing/batch_curve.h"
#include "util/test_util.h"
#include "workload/workload_yaml.h"

namespace migserve::e2e {
namespace {

using proxy::Local;
using proxy::RunDir;

using cli::Cli;
using cli::CliResult;

using testing::kA100Profiles;
using testing::SourcePath;
namespace k8s = kubernetes;

constexpr double kScale = 20;      // real time / emulated time
constexpr double kDurationS = 24;  // of load, per router
constexpr double kWarmupS = 4;     // not counted

// Two of night's services (docs/benchmarks.md) and a second service of one
// of their models, told apart by the migserve-service header: enough
// replicas that the router matters, little enough load for a 2-core
// machine.
constexpr char kWorkload[] = R"(gpu: A100-SXM4-80GB
latency_budget: 1
max_procs: 1
services:
  - {name: bert-1, model: bert, throughput: 1881, latency_ms: 100}
  - {name: bert-2, model: bert, throughput: 1131, latency_ms: 100}
  - {name: resnet50-1, model: resnet50, throughput: 1631, latency_ms: 100}
)";

// p99 per service, ms of real (unscaled) time.
using P99s = std::map<std::string, double>;

P99s ServeP99(const std::string& deployment, const std::string& workload,
              const std::string& routing) {
  CliResult r =
      Cli({"serve", "-d", deployment, "-w", workload, "-p", kA100Profiles,
           "--routing", routing, "--duration", "60", "--format", "json"});
  EXPECT_LE(r.code, 1) << r.err;
  P99s out;
  nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& s : report["services"]) {
    out[s["service"].get<std::string>()] = s["p99_ms"].get<double>();
  }
  return out;
}

// The deployment's replicas as emulated model servers (batching as their
// profiles say, or answering at once), and the routes the controller would
// keep for them.
class EmulatedCluster {
 public:
  EmulatedCluster(const cluster::ClusterState& state,
                  const profile::ProfileTable& profiles,
                  const workload::Workload& workload, bool batching = true) {
    for (const cluster::GpuState& g : state.gpus) {
      for (const cluster::Slot& s : g.slots) {
        if (!s.replica) continue;
        const cluster::Replica& r = *s.replica;
        const workload::Service& service =
            workload.services[workload.FindService(r.service)];
        const profile::ProfileRow* row = profile::FindRow(
            profiles, r.model.empty() ? service.model : r.model, g.model->name,
            g.model->profiles[s.instance.profile].name, r.batch, r.procs);
        queueing::BatchCurve curve = queueing::BatchCurve::Of(profiles, *row);
        proxy::EmulatedReplicaOptions options;
        options.max_batch = r.batch;
        options.workers = r.procs;
        options.threads = batching ? 4 * r.batch * r.procs + 8 : 1;
        if (batching) {
          options.batch_ms = [curve](int b) { return curve.Ms(b) * kScale; };
        }
        options.service = r.service;
        options.model = service.model;
        replicas_.push_back(std::make_unique<proxy::EmulatedReplica>(options));
        cluster::ReplicaSite site{g.id, s.instance.start};
        pods_[std::to_string(replicas_.size())] =
            proxy::ReadyReplicaPod(r.service, site, replicas_.back()->port());
      }
    }
    routes_.generation = 1;
    for (const auto& [name, route] : cluster::Routes(state)) {
      routes_.services[name] = {
          route, workload.services[workload.FindService(name)].model};
    }
  }

  proxy::ProxyConfig Config() const { return proxy::ConfigOf(routes_, pods_); }

  // Requests that reached a replica of another service or model, and all
  // requests replicas received.
  int Misrouted() const {
    int n = 0;
    for (const auto& r : replicas_) n += r->misrouted();
    return n;
  }
  int Hits() const {
    int n = 0;
    for (const auto& r : replicas_) n += r->hits();
    return n;
  }

 private:
  std::vector<std::unique_ptr<proxy::EmulatedReplica>> replicas_;
  kube::Informer::Objects pods_;
  k8s::ProxyRoutes routes_;
};

// A workload as `optimize --algo ALGO` plans it, read back.
struct Planned {
  workload::Workload workload;
  profile::ProfileTable profiles;
  deployment::Deployment deployment;
  cluster::ClusterState state;
};

// Optimizes `workload_file` into `deployment_file`; nullopt, with the test
// failed, where a step fails.
std::optional<Planned> Plan(const std::string& workload_file,
                            const std::string& algo,
                            const std::string& deployment_file) {
  CliResult r = Cli({"optimize", "-w", workload_file, "-p", kA100Profiles,
                     "--algo", algo, "-o", deployment_file});
  EXPECT_EQ(r.code, 0) << r.err;
  auto workload = workload::LoadWorkload(workload_file);
  auto profiles = profile::LoadProfileCsv(kA100Profiles);
  auto deployment = deployment::LoadDeployment(deployment_file);
  if (r.code != 0 || !workload.ok() || !profiles.ok() || !deployment.ok()) {
    ADD_FAILURE() << "cannot read back " << deployment_file;
    return std::nullopt;
  }
  auto state = cluster::ClusterFromDeployment(*deployment, {8, 0});
  if (!state.ok()) {
    ADD_FAILURE() << state.status().ToString();
    return std::nullopt;
  }
  return Planned{std::move(*workload), std::move(*profiles),
                 std::move(*deployment), std::move(*state)};
}

// Runs the load of every service through two fresh nginx instances
// (weighted random instead of smooth weighted round robin if `random`).
P99s MeasureP99(const EmulatedCluster& cluster,
                const workload::Workload& workload, bool random,
                const std::string& dir) {
  std::vector<std::unique_ptr<proxy::NginxProcess>> proxies;
  std::vector<int> ports;
  for (int i = 0; i < 2; ++i) {
    proxy::NginxSetup setup;
    ports.push_back(testing::FreePort());
    setup.listen = Local(ports.back());
    setup.prefix = RunDir(dir + "/nginx-" + std::to_string(i));
    setup.worker_processes = 1;
    setup.random = random;
    auto nginx = proxy::NginxProcess::Start(proxy::NginxBinary(), setup,
                                            cluster.Config());
    EXPECT_TRUE(nginx.ok()) << nginx.status().ToString();
    if (!nginx.ok()) return {};
    EXPECT_TRUE(
        proxy::WaitForGeneration("127.0.0.1", ports.back(), 1, 10).ok());
    proxies.push_back(std::move(*nginx));
  }
  std::map<std::string, proxy::LoadResult> results;
  std::vector<std::thread> load;
  uint64_t seed = 1;
  for (const workload::Service& s : workload.services) {
    results[s.name];
    proxy::LoadOptions options;
    options.proxies = ports;
    options.path = "/v2/models/" + s.model + "/infer";
    options.service = s.name;
    options.rate = s.throughput.value() / kScale;
    options.duration_s = kDurationS;
    options.warmup_s = kWarmupS;
    options.seed = seed++;
    load.emplace_back([options, result = &results[s.name]] {
      *result = proxy::RunOpenLoop(options);
    });
  }
  for (std::thread& t : load) t.join();
  P99s out;
  for (const auto& [service, result] : results) {
    EXPECT_EQ(result.failed, 0) << service;
    EXPECT_GT(result.latencies_ms.size(), 1000u) << service;
    out[service] = proxy::Quantile(result.latencies_ms, 0.99) / kScale;
  }
  return out;
}

TEST(RealProxyTest, TheProxyHoldsEveryP99AndARandomBalancerMissesAsServeSays) {
  if (testing::kAddressSanitizer) {
    // Latencies are what this test measures; under ASan the replicas and
    // the load generator run several times slower than the batches they
    // emulate. `make test` runs it uninstrumented.
    GTEST_SKIP() << "timing test: not run under AddressSanitizer";
  }
  std::string dir = testing::TempDir() + "/real-proxy";
  std::string workload_file = testing::WriteTempFile("two.yaml", kWorkload);
  std::string deployment_file = dir + ".json";
  std::optional<Planned> planned = Plan(workload_file, "milp", deployment_file);
  ASSERT_TRUE(planned);
  const workload::Workload* workload = &planned->workload;
  EmulatedCluster cluster(planned->state, planned->profiles, *workload);

  P99s serve_proxy = ServeP99(deployment_file, workload_file, "proxy");
  P99s measured = MeasureP99(cluster, *workload, false, dir);
  EXPECT_EQ(cluster.Misrouted(), 0);
  for (const workload::Service& s : workload->services) {
    SCOPED_TRACE(s.name);
    EXPECT_LE(measured[s.name], s.latency_ms);
    EXPECT_NEAR(measured[s.name], serve_proxy[s.name],
                0.25 * serve_proxy[s.name]);
    std::cerr << fmt::format(
        "{}: p99 {:.1f} ms behind nginx, serve {:.1f} ms\n", s.name,
        measured[s.name], serve_proxy[s.name]);
  }

  P99s serve_random = ServeP99(deployment_file, workload_file, "random");
  P99s random = MeasureP99(cluster, *workload, true, dir);
  int misses = 0;
  for (const workload::Service& s : workload->services) {
    SCOPED_TRACE(s.name);
    std::cerr << fmt::format(
        "{}: p99 {:.1f} ms behind random nginx, serve --routing random "
        "{:.1f} ms\n",
        s.name, random[s.name], serve_random[s.name]);
    // A predicted miss within the 25% the measurement is held to above
    // (114 ms against 100, say) may measure either way.
    if (serve_random[s.name] <= 1.25 * s.latency_ms) continue;
    ++misses;
    EXPECT_GT(random[s.name], s.latency_ms);
  }
  EXPECT_GE(misses, 1);
}

// The demo's workload as `optimize` plans it by default (router: proxy):
// 24 services, most models served by two or three of them, 840 replicas
// behind one real nginx. Every service's requests, told apart by the
// migserve-service header, reach its own replicas and no other. (Its p99
// at 300,000 requests per second cannot be measured on a 2-core machine;
// the test above measures it for two services of one model.)
TEST(RealProxyTest, Normal1ReachesEveryServicesOwnReplicasOnly) {
  std::string dir = testing::TempDir() + "/normal-1";
  std::string workload_file = SourcePath("data/workloads/normal-1.yaml");
  std::string deployment_file = dir + ".json";
  std::optional<Planned> planned =
      Plan(workload_file, "greedy", deployment_file);
  ASSERT_TRUE(planned);
  const workload::Workload* workload = &planned->workload;
  EXPECT_EQ(planned->deployment.Plane(), queueing::DataPlane::kProxy);
  EmulatedCluster cluster(planned->state, planned->profiles, *workload, false);

  int port = testing::FreePort();
  proxy::NginxSetup setup;
  setup.listen = Local(port);
  setup.prefix = RunDir(dir + "/nginx");
  setup.worker_processes = 1;
  auto nginx =
      proxy::NginxProcess::Start(proxy::NginxBinary(), setup, cluster.Config());
  ASSERT_TRUE(nginx.ok()) << nginx.status().ToString();
  ASSERT_TRUE(proxy::WaitForGeneration("127.0.0.1", port, 1, 10).ok());
  httplib::Client client("127.0.0.1", port);
  constexpr int kPerService = 40;
  int failed = 0;
  for (int i = 0; i < kPerService; ++i) {
    for (const workload::Service& s : workload->services) {
      auto res =
          client.Post("/v2/models/" + s.model + "/infer",
                      {{"migserve-service", s.name}}, "{}", "application/json");
      if (!res || res->status != 200) ++failed;
    }
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(cluster.Hits(),
            kPerService * static_cast<int>(workload->services.size()));
  EXPECT_EQ(cluster.Misrouted(), 0);
}

}  // namespace
}  // namespace migserve::e2e
