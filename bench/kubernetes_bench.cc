// What an action event costs the Kubernetes backend's view of the cluster
// at region scale: one pod's change to the books (cluster_books.h), against
// one look at every node and pod, which each event cost before the books
// (a lower bound of it: the look then also copied and parsed every pod's
// JSON). GPUs of one 7g instance, 8 to a node, each serving a replica.
#include <benchmark/benchmark.h>

#include "kubernetes/cluster_books.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/agent_driver.h"
#include "kubernetes/partition/mig_annotations.h"
#include "mig/gpu_catalog.h"

namespace migserve {
namespace {

using kubernetes::ClusterBooks;
using kubernetes::PodClaim;

struct Fleet {
  std::vector<std::pair<std::string, nlohmann::json>> nodes;
  std::vector<std::pair<std::string, PodClaim>> pods;
};

Fleet MakeFleet(int gpus) {
  const mig::GpuModel& a100 =
      *mig::GpuCatalog::Default().Find("A100-SXM4-80GB").value();
  const mig::Layout seven({{a100.FindProfile("7g.80gb"), 0}});
  kubernetes::NodeLayouts eight;
  for (int g = 0; g < 8; ++g) eight.gpus.push_back({&a100, seven});
  nlohmann::json node;
  node["metadata"]["annotations"][kubernetes::kAnnotationLayouts] =
      kubernetes::FormatLayouts(eight);
  Fleet fleet;
  for (int n = 0; n < gpus / 8; ++n) {
    std::string name = "node-" + std::to_string(n);
    fleet.nodes.emplace_back(name, node);
    for (int g = 0; g < 8; ++g) {
      cluster::Replica r{"svc-" + std::to_string((n * 8 + g) % 2000), 8, 1, 100,
                         10};
      fleet.pods.emplace_back(name + "-" + std::to_string(g),
                              PodClaim{{name, g}, "7g.80gb", 0, r});
    }
  }
  return fleet;
}

// Every node's layouts as the backend reads them (the agent's annotation,
// parsed), then every pod's claim.
void Fill(const Fleet& fleet, ClusterBooks* books) {
  const kubernetes::AgentDriver agent(nullptr);  // reads only
  for (const auto& [name, node] : fleet.nodes) {
    books->SetNode(name, agent.Layouts(name, node).value());
  }
  for (const auto& [name, claim] : fleet.pods) books->SetPod(name, claim);
}

void BM_KubernetesBooksPodChange(benchmark::State& state) {
  Fleet fleet = MakeFleet(static_cast<int>(state.range(0)));
  ClusterBooks books({});
  Fill(fleet, &books);
  size_t i = 0;
  for (auto _ : state) {
    // A replica goes, then comes back: two events.
    const auto& [name, claim] = fleet.pods[i++ % fleet.pods.size()];
    books.SetPod(name, std::nullopt);
    books.SetPod(name, claim);
  }
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["gpus"] = static_cast<double>(books.state().gpus.size());
}
BENCHMARK(BM_KubernetesBooksPodChange)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMicrosecond);

void BM_KubernetesWholeLook(benchmark::State& state) {
  Fleet fleet = MakeFleet(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ClusterBooks books({});
    Fill(fleet, &books);
    benchmark::DoNotOptimize(books.capacity());
  }
  state.counters["gpus"] = static_cast<double>(fleet.pods.size());
}
BENCHMARK(BM_KubernetesWholeLook)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(50000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace migserve
