#include "controller/target_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::GpuState;
using cluster::Slot;

// How much of `want` the physical GPU `have` already holds: memory slices
// of instances serving the same service count 16 times those merely present.
int Overlap(const GpuState& want, const GpuState& have) {
  const mig::GpuModel& gpu = *want.model;
  int score = 0;
  for (const Slot& w : want.slots) {
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
                    const deployment::Deployment& target,
                    const std::vector<const GpuState*>& serving) {
  for (const deployment::DeployedGpu& t : target.gpus) {
    if (!t.node) return false;
  }
  for (const GpuState* t : serving) {
    const GpuState* g = current.FindGpu(t->id);
    if (g == nullptr || g->model != t->model) return false;
  }
  return true;
}

}  // namespace

StatusOr<DesiredLayouts> MapTarget(const ClusterState& current,
                                   const deployment::Deployment& target) {
  cluster::PlacementOptions placement;
  MIGSERVE_ASSIGN_OR_RETURN(ClusterState wanted,
                            cluster::ClusterFromDeployment(target, placement));
  std::vector<const GpuState*> serving;
  for (const GpuState& g : wanted.gpus) {
    if (g.HasReplica()) serving.push_back(&g);
  }
  DesiredLayouts desired;
  if (KeepsPlacement(current, target, serving)) {
    for (const GpuState* t : serving) desired[t->id] = t->slots;
    return desired;
  }
  std::map<const mig::GpuModel*, int> wanted_count, have_count;
  for (const GpuState* t : serving) ++wanted_count[t->model];
  for (const GpuState& g : current.gpus) ++have_count[g.model];
  for (const auto& [model, count] : wanted_count) {
    if (count > have_count[model]) {
      return Status::FailedPrecondition(fmt::format(
          "the target serves on {} {} GPUs but the cluster has {} (add "
          "--spare-gpus, or GPUs of that model to the inventory)",
          count, model->name, have_count[model]));
    }
  }
  // Best pairs first; ties go to idle GPUs, then to lower ids.
  std::vector<std::tuple<int, int, int, int>> pairs;  // -score, busy, p, t
  for (size_t t = 0; t < serving.size(); ++t) {
    for (size_t p = 0; p < current.gpus.size(); ++p) {
      if (current.gpus[p].model != serving[t]->model) continue;
      int score = Overlap(*serving[t], current.gpus[p]);
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
