// Google Benchmarks of the optimizer. Run with `make bench` (or
// build/migserve_bench --benchmark_filter=...).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "optimizer/heuristic/config_space.h"
#include "optimizer/heuristic/genetic_optimizer.h"
#include "optimizer/heuristic/greedy_optimizer.h"
#include "optimizer/registry.h"
#include "profile/profile_csv.h"
#include "workload/generator.h"
#include "workload/workload_yaml.h"

namespace migserve {
namespace {

template <typename T>
T OrDie(StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    std::abort();
  }
  return std::move(v).value();
}

const profile::ProfileTable& Profiles() {
  static const auto* table =
      new profile::ProfileTable(OrDie(profile::LoadProfileCsv(
          std::string(MIGSERVE_SOURCE_DIR) + "/data/profiles/a100-80gb.csv")));
  return *table;
}

// A paper-style workload: `services` services, normal (or lognormal)
// rates, relaxed bound `gpus` GPUs, 100 ms SLOs.
struct Fixture {
  Fixture(int services, int gpus,
          workload::RateDistribution distribution =
              workload::RateDistribution::kNormal,
          uint64_t seed = 42)
      : workload(OrDie(workload::GenerateWorkload(Profiles(),
                                                  [&] {
                                                    workload::GenerateOptions o;
                                                    o.services = services;
                                                    o.target_gpus = gpus;
                                                    o.distribution =
                                                        distribution;
                                                    o.seed = seed;
                                                    return o;
                                                  }()))),
        gpu(*OrDie(mig::GpuCatalog::Default().Find(workload.gpu))),
        caps(OrDie(workload::CapacityMatrix::Build(workload, Profiles(), gpu))),
        problem(workload, gpu, caps) {}

  workload::Workload workload;
  const mig::GpuModel& gpu;
  workload::CapacityMatrix caps;
  optimizer::Problem problem;
};

void BM_MaximalLayouts(benchmark::State& state) {
  const mig::GpuModel& gpu =
      *OrDie(mig::GpuCatalog::Default().Find("A100-SXM4-80GB"));
  for (auto _ : state) {
    benchmark::DoNotOptimize(mig::MaximalLayouts(gpu, mig::MigOptions{}));
  }
}
BENCHMARK(BM_MaximalLayouts)->Unit(benchmark::kMillisecond);

// Args: services, GPUs of the relaxed bound.
void BM_Baseline(benchmark::State& state, const char* algo) {
  Fixture f(state.range(0), state.range(1));
  auto optimizer = OrDie(optimizer::MakeOptimizer(algo));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        optimizer::RunOptimizer(*optimizer, f.problem, {}));
  }
}
BENCHMARK_CAPTURE(BM_Baseline, all_1g, "all-1g")->Args({24, 300});

void BM_ConfigSpace(benchmark::State& state) {
  Fixture f(state.range(0), state.range(1));
  for (auto _ : state) {
    optimizer::ConfigSpace space(f.problem);
    state.counters["groups"] = space.num_groups();
  }
}
BENCHMARK(BM_ConfigSpace)
    ->Args({24, 300})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond);

// The greedy alone, on a config space built once (as the two-phase does);
// BM_GreedyEndToEnd includes building the space.
void BM_Greedy(benchmark::State& state) {
  Fixture f(state.range(0), state.range(1));
  optimizer::ConfigSpace space(f.problem);
  deployment::CompletionRates zero(f.problem.num_services(), 0.0);
  for (auto _ : state) {
    auto configs = optimizer::Greedy(space, zero, {});
    state.counters["gpus"] = configs.size();
  }
}
BENCHMARK(BM_Greedy)
    ->Args({24, 300})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond);

void BM_GreedyEndToEnd(benchmark::State& state) {
  Fixture f(state.range(0), state.range(1));
  auto greedy = OrDie(optimizer::MakeOptimizer("greedy"));
  for (auto _ : state) {
    benchmark::DoNotOptimize(optimizer::RunOptimizer(*greedy, f.problem, {}));
  }
}
BENCHMARK(BM_GreedyEndToEnd)
    ->Args({24, 300})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond);

// The fast phase plus one GA round (16 children, each a crossover refilled
// by MCTS) on every core; subtract BM_GreedyEndToEnd for the round alone.
void BM_TwoPhaseOneRound(benchmark::State& state) {
  Fixture f(state.range(0), state.range(1));
  optimizer::SolveOptions options;
  options.genetic.max_rounds = 1;
  auto two_phase = OrDie(optimizer::MakeOptimizer("two-phase"));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        optimizer::RunOptimizer(*two_phase, f.problem, options));
  }
}
BENCHMARK(BM_TwoPhaseOneRound)
    ->Args({24, 300})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The exact optimizer end to end (model, service cuts, dives,
// CBC if needed), with the default 60 s limit.
void BM_Milp(benchmark::State& state) {
  Fixture f(state.range(0), state.range(1));
  auto milp = OrDie(optimizer::MakeOptimizer("milp"));
  for (auto _ : state) {
    optimizer::RunResult run = optimizer::RunOptimizer(*milp, f.problem, {});
    state.counters["gpus"] = run.deployment.gpus.size();
    state.counters["optimal"] = run.outcome == optimizer::Outcome::kOptimal;
  }
}
BENCHMARK(BM_Milp)
    ->Args({24, 300})
    ->Args({100, 1000})
    ->Unit(benchmark::kMillisecond);

// Fleet scale (issue 18): args services, GPUs of the relaxed bound, rates
// (0 normal, 1 lognormal), on the workloads `tools/scale-figures.sh`
// generates (seed 18). Counters: GPUs, the proven bound (milp) or the
// relaxed one, and the process's peak memory so far (run one algorithm per
// process to read it as that algorithm's).
void BM_Scale(benchmark::State& state, const char* algo) {
  Fixture f(state.range(0), state.range(1),
            state.range(2) == 0 ? workload::RateDistribution::kNormal
                                : workload::RateDistribution::kLognormal,
            18);
  auto optimizer = OrDie(optimizer::MakeOptimizer(algo));
  optimizer::SolveOptions options;
  options.time_limit_s = 20;
  for (auto _ : state) {
    optimizer::RunResult run =
        optimizer::RunOptimizer(*optimizer, f.problem, options);
    state.counters["gpus"] = run.deployment.gpus.size();
    state.counters["bound"] = run.deployment.summary->lower_bound.value_or(0);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_mb"] = usage.ru_maxrss / 1024.0;
}
#define MIGSERVE_SCALE(algo)               \
  BENCHMARK_CAPTURE(BM_Scale, algo, #algo) \
      ->Args({200, 5000, 0})               \
      ->Args({200, 5000, 1})               \
      ->Args({400, 10000, 0})              \
      ->Args({400, 10000, 1})              \
      ->Iterations(1)                      \
      ->Repetitions(3)                     \
      ->Unit(benchmark::kMillisecond)      \
      ->UseRealTime()
MIGSERVE_SCALE(greedy);
MIGSERVE_SCALE(milp);
MIGSERVE_SCALE(parvagpu);
#undef MIGSERVE_SCALE

}  // namespace
}  // namespace migserve
