// Speed of the p99 capacity model's units of work (one simulated rate: a
// replica fed 100,000 arrivals, for its latency quantile or for the credit
// search's verdict) and of `serve` on the shipped day
// deployment (18 GPUs, 30 simulated seconds, about 700,000 requests).
#include <benchmark/benchmark.h>

#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "queueing/p99_capacity.h"
#include "serving/serve.h"
#include "workload/workload_yaml.h"

namespace migserve {
namespace {

std::string Source(const std::string& path) {
  return std::string(MIGSERVE_SOURCE_DIR) + "/" + path;
}

// bert on 1g.10gb: batch 1 13 ms ... batch 8 79 ms; Erlang-1 and -64
// arrivals at 90% of saturation.
void BM_ReplicaQuantileAtOneRate(benchmark::State& state) {
  queueing::BatchCurve curve({{1, 13}, {2, 23}, {4, 42}, {8, 79}});
  queueing::ArrivalShape shape{.every = static_cast<int>(state.range(0))};
  double rate = 0.9 * 8 / 0.079;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        queueing::LatencyQuantileMs(curve, {8, 1, 0}, rate, shape));
  }
}
BENCHMARK(BM_ReplicaQuantileAtOneRate)
    ->Arg(1)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

// The credit search's unit of work: one verdict (is the p99 within the
// SLO at this rate?) on the search's 100,000 arrivals, at a rate that
// passes, so every arrival is simulated.
void BM_ReplicaVerdictAtOneRate(benchmark::State& state) {
  queueing::BatchCurve curve({{1, 13}, {2, 23}, {4, 42}, {8, 79}});
  queueing::Traffic traffic{.service_rate = 0.9 * 8 / 0.079 * state.range(0)};
  double rate = 0.9 * 8 / 0.079;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        queueing::QuantileHolds(curve, {8, 1, 0}, 400, traffic, rate));
  }
}
BENCHMARK(BM_ReplicaVerdictAtOneRate)
    ->Arg(1)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

void BM_ServeDay(benchmark::State& state) {
  auto d = deployment::LoadDeployment(Source("data/deployments/day.json"));
  auto w = workload::LoadWorkload(Source("data/workloads/day.yaml"));
  auto p = profile::LoadProfileCsv(Source("data/profiles/a100-80gb.csv"));
  auto cluster = cluster::ClusterFromDeployment(*d, {});
  for (auto _ : state) {
    benchmark::DoNotOptimize(serving::Serve(*cluster, *w, *p, {}));
  }
}
BENCHMARK(BM_ServeDay)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace migserve
