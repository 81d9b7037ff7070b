// Google Benchmarks of the optimizer's inputs and algorithms. Run with
// `make bench` (or build/migserve_bench --benchmark_filter=...).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "mig/gpu_catalog.h"
#include "mig/layout_enumerator.h"
#include "optimizer/registry.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve {
namespace {

std::string Source(const std::string& relative) {
  return std::string(MIGSERVE_SOURCE_DIR) + "/" + relative;
}

template <typename T>
T OrDie(StatusOr<T> v) {
  if (!v.ok()) {
    std::fprintf(stderr, "%s\n", v.status().ToString().c_str());
    std::abort();
  }
  return std::move(v).value();
}

struct Fixture {
  explicit Fixture(const std::string& workload_name)
      : workload(OrDie(workload::LoadWorkload(
            Source("data/workloads/" + workload_name + ".yaml")))),
        profiles(OrDie(
            profile::LoadProfileCsv(Source("data/profiles/a100-80gb.csv")))),
        gpu(*OrDie(mig::GpuCatalog::Default().Find(workload.gpu))),
        caps(OrDie(workload::CapacityMatrix::Build(workload, profiles, gpu))),
        problem(workload, gpu, caps) {}

  workload::Workload workload;
  profile::ProfileTable profiles;
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
BENCHMARK(BM_MaximalLayouts);

void BM_CapacityMatrix(benchmark::State& state) {
  Fixture f("normal-1");
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        workload::CapacityMatrix::Build(f.workload, f.profiles, f.gpu));
  }
}
BENCHMARK(BM_CapacityMatrix);

void BM_Algorithm(benchmark::State& state, const char* algo) {
  Fixture f("normal-1");
  auto optimizer = OrDie(optimizer::MakeOptimizer(algo));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        optimizer::RunOptimizer(*optimizer, f.problem, {}));
  }
}
BENCHMARK_CAPTURE(BM_Algorithm, whole, "whole");
BENCHMARK_CAPTURE(BM_Algorithm, all_1g, "all-1g");
BENCHMARK_CAPTURE(BM_Algorithm, mix, "mix");

}  // namespace
}  // namespace migserve
