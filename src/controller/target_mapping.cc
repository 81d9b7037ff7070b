#include "controller/target_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::GpuState;
using cluster::Slot;

// How much of `want` the physical GPU `have` already holds: memory slices
// of instances serving the same service count 16 times those merely present.
int Overlap(const mig::GpuModel& gpu, const std::vector<Slot>& want,
            const GpuState& have) {
  int score = 0;
  for (const Slot& w : want) {
    const Slot* h = have.Find(w.instance);
    if (h == nullptr) continue;
    int size = gpu.profiles[w.instance.profile].memory_slices;
    bool same =
        h->replica && w.replica && h->replica->service == w.replica->service;
    score += same ? 16 * size : size;
  }
  return score;
}

bool KeepsPlacement(const ClusterState& current,
                    const deployment::Deployment& target) {
  std::set<int> seen;
  for (const deployment::DeployedGpu& t : target.gpus) {
    const GpuState* g = current.FindGpu(t.id);
    if (!t.node || g == nullptr || g->node != *t.node ||
        !seen.insert(t.id).second) {
      return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<DesiredLayouts> MapTarget(const mig::GpuModel& gpu,
                                   const ClusterState& current,
                                   const deployment::Deployment& target) {
  cluster::PlacementOptions placement;
  MIGSERVE_ASSIGN_OR_RETURN(ClusterState wanted, cluster::ClusterFromDeployment(
                                                     target, gpu, placement));
  std::vector<const GpuState*> serving;
  for (const GpuState& g : wanted.gpus) {
    if (g.HasReplica()) serving.push_back(&g);
  }
  DesiredLayouts desired;
  if (KeepsPlacement(current, target)) {
    for (const GpuState* t : serving) desired[t->id] = t->slots;
    return desired;
  }
  if (serving.size() > current.gpus.size()) {
    return Status::FailedPrecondition(
        fmt::format("the target serves on {} GPUs but the cluster has {} (add "
                    "--spare-gpus)",
                    serving.size(), current.gpus.size()));
  }
  // Best pairs first; ties go to idle GPUs, then to lower ids.
  std::vector<std::tuple<int, int, int, int>> pairs;  // -score, busy, p, t
  for (size_t t = 0; t < serving.size(); ++t) {
    for (size_t p = 0; p < current.gpus.size(); ++p) {
      int score = Overlap(gpu, serving[t]->slots, current.gpus[p]);
      pairs.emplace_back(-score, current.gpus[p].HasReplica() ? 1 : 0,
                         static_cast<int>(p), static_cast<int>(t));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<bool> used(current.gpus.size(), false), placed(serving.size());
  for (const auto& [score, busy, p, t] : pairs) {
    if (used[p] || placed[t]) continue;
    used[p] = placed[t] = true;
    desired[current.gpus[p].id] = serving[t]->slots;
  }
  return desired;
}

}  // namespace migserve::controller
