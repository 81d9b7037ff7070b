// Speed of the exchange-and-compact planner, of the all-orders safety
// checker and of the controller executing the plan on the simulated cluster
// (plan included) on night2day scaled k times (k copies of each GPU, every
// required throughput times k), on a cluster of 24 k GPUs (3 k nodes of 8).
#include <benchmark/benchmark.h>

#include "cluster/routing.h"
#include "controller/planner.h"
#include "controller/safety_checker.h"
#include "controller/transition_simulation.h"
#include "deployment/deployment_json.h"
#include "mig/gpu_catalog.h"

namespace migserve {
namespace {

deployment::Deployment Scaled(const std::string& name, int k) {
  deployment::Deployment d =
      deployment::LoadDeployment(std::string(MIGSERVE_SOURCE_DIR) +
                                 "/data/deployments/" + name + ".json")
          .value();
  std::vector<deployment::DeployedGpu> gpus;
  for (int copy = 0; copy < k; ++copy) {
    for (deployment::DeployedGpu g : d.gpus) {
      g.id += copy * static_cast<int>(d.gpus.size());
      gpus.push_back(g);
    }
  }
  d.gpus = gpus;
  for (workload::Service& s : d.services) {
    s.throughput = Rate::Of(s.throughput.value() * k).value();
  }
  return d;
}

struct Case {
  deployment::Deployment from, to;
  cluster::ClusterState current;
  controller::TransitionGoal goal;
};

Case NightToDay(int k) {
  Case c{Scaled("night", k), Scaled("day", k), {}, {}};
  c.current = cluster::ClusterFromDeployment(c.from, {8, 24 * k}).value();
  c.goal = controller::MakeGoal(c.from, c.to);
  return c;
}

void BM_Planner(benchmark::State& state) {
  Case c = NightToDay(static_cast<int>(state.range(0)));
  size_t actions = 0;
  for (auto _ : state) {
    auto plan = controller::PlanTransition(c.current, c.to, c.goal);
    actions = plan->actions.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["gpus"] = static_cast<double>(c.current.gpus.size());
  state.counters["actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_Planner)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(40)
    ->Unit(benchmark::kMillisecond);

void BM_SafetyChecker(benchmark::State& state) {
  Case c = NightToDay(static_cast<int>(state.range(0)));
  cluster::TransitionPlan plan =
      controller::PlanTransition(c.current, c.to, c.goal).value();
  for (auto _ : state) {
    controller::SafetyReport report =
        controller::CheckPlan(c.current, plan, c.goal);
    if (!report.ok()) state.SkipWithError("unsafe plan");
    benchmark::DoNotOptimize(report);
  }
  state.counters["gpus"] = static_cast<double>(c.current.gpus.size());
  state.counters["actions"] = static_cast<double>(plan.actions.size());
}
BENCHMARK(BM_SafetyChecker)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(40)
    ->Unit(benchmark::kMillisecond);

// The whole simulate: plan, then every action through the controller's
// executor on the simulated cluster (issue 32: the work per action event
// must not grow with the cluster).
void BM_SimulatedTransition(benchmark::State& state) {
  Case c = NightToDay(static_cast<int>(state.range(0)));
  size_t actions = 0;
  const controller::SimulationOptions options;
  for (auto _ : state) {
    auto sim = controller::SimulateTransition(c.current, c.to, c.goal, options);
    if (!sim.ok() || !sim->run.ok()) state.SkipWithError("simulate failed");
    actions = sim->report.timeline.size();
    benchmark::DoNotOptimize(sim);
  }
  state.counters["gpus"] = static_cast<double>(c.current.gpus.size());
  state.counters["actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_SimulatedTransition)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(40)
    ->Unit(benchmark::kMillisecond);

// A service's route at an action event on a cluster of `range(0)` GPUs of
// one 7g instance, each serving one of 2,000 services: from every
// service's route (what the route keeper's RouteOf built at each event) and
// from the service's own GPUs (its index now).
cluster::ClusterState RoutedFleet(int gpus) {
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  cluster::ClusterState state;
  for (int g = 0; g < gpus; ++g) {
    cluster::Replica r{"svc-" + std::to_string(g % 2000), 8, 1, 100, 10};
    state.gpus.push_back({{"node-" + std::to_string(g / 8), g % 8},
                          &a100,
                          {{{a100.FindProfile("7g.80gb"), 0}, r}}});
  }
  state.Sort();
  return state;
}

void BM_RouteOfWholeCluster(benchmark::State& state) {
  cluster::ClusterState fleet = RoutedFleet(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(cluster::Routes(fleet).at("svc-7"));
  }
}
BENCHMARK(BM_RouteOfWholeCluster)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);

void BM_RouteOfIndexed(benchmark::State& state) {
  cluster::ClusterState fleet = RoutedFleet(static_cast<int>(state.range(0)));
  std::set<cluster::GpuId> gpus;
  for (const cluster::GpuState& g : fleet.gpus) {
    if (g.slots[0].replica->service == "svc-7") gpus.insert(g.id);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(cluster::RouteOf(fleet, "svc-7", gpus));
  }
}
BENCHMARK(BM_RouteOfIndexed)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace migserve
