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

// GPUs that pair alike: the same model and the same slots (instance and
// service). members[c] lists class c's GPUs in order; of[g] is g's class.
struct Classes {
  std::vector<std::vector<int>> members;
  std::vector<int> of;
};

Classes ClassesOf(const std::vector<const GpuState*>& gpus) {
  using Signature =
      std::pair<const mig::GpuModel*,
                std::vector<std::tuple<int, int, bool, std::string>>>;
  std::map<Signature, int> ids;
  Classes classes;
  for (size_t g = 0; g < gpus.size(); ++g) {
    Signature sig{gpus[g]->model, {}};
    for (const Slot& s : gpus[g]->slots) {
      sig.second.emplace_back(s.instance.profile, s.instance.start,
                              s.replica.has_value(),
                              s.replica ? s.replica->service : "");
    }
    std::sort(sig.second.begin(), sig.second.end());
    auto [it, added] =
        ids.emplace(std::move(sig), static_cast<int>(classes.members.size()));
    if (added) classes.members.emplace_back();
    classes.members[it->second].push_back(static_cast<int>(g));
    classes.of.push_back(it->second);
  }
  return classes;
}

bool KeepsPlacement(const ClusterState& current,
                    const deployment::Deployment& target,
                    const std::vector<const GpuState*>& serving) {
  for (const deployment::DeployedGpu& t : target.gpus) {
    if (!t.node) return false;
  }
  for (const GpuState* t : serving) {
    const GpuState* g = current.FindGpu(t->id);
    if (g == nullptr || g->model != t->model || !g->held_by.empty()) {
      return false;
    }
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
  // A GPU someone else holds a device of takes nothing new.
  std::vector<const GpuState*> have;
  std::map<const mig::GpuModel*, int> wanted_count, have_count, held_count;
  for (const GpuState* t : serving) ++wanted_count[t->model];
  for (const GpuState& g : current.gpus) {
    if (g.held_by.empty()) {
      have.push_back(&g);
      ++have_count[g.model];
    } else {
      ++held_count[g.model];
    }
  }
  for (const auto& [model, count] : wanted_count) {
    if (count > have_count[model]) {
      std::string held =
          held_count[model] == 0
              ? ""
              : fmt::format(
                    ", and {} more that claims not migserve's hold "
                    "devices of",
                    held_count[model]);
      return Status::FailedPrecondition(fmt::format(
          "the target serves on {} {} GPUs but the cluster has {}{} (add "
          "--spare-gpus, or GPUs of that model to the inventory)",
          count, model->name, have_count[model], held));
    }
  }
  // Best pairs first; ties go to idle GPUs, then to lower ids: the greedy
  // over every (target, current) pair sorted by (-score, busy, p, t). GPUs
  // with the same signature pair alike, so the scores are computed per pair
  // of classes, and the greedy runs level by level of (-score, busy): in
  // order of p, each free p takes the lowest free t of the classes its
  // class pairs with at that level. A class's t are taken lowest first, so
  // a cursor per class finds its lowest free one.
  Classes targets = ClassesOf(serving);
  Classes currents = ClassesOf(have);
  // (-score, busy) -> (current class, target class) pairs.
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> levels;
  for (size_t a = 0; a < targets.members.size(); ++a) {
    const GpuState& t = *serving[targets.members[a][0]];
    for (size_t b = 0; b < currents.members.size(); ++b) {
      const GpuState& p = *have[currents.members[b][0]];
      if (p.model != t.model) continue;
      levels[{-Overlap(t, p), p.HasReplica() ? 1 : 0}].emplace_back(b, a);
    }
  }
  std::vector<bool> used(have.size(), false);
  std::vector<size_t> cursor(targets.members.size(), 0);
  size_t placed = 0;
  for (const auto& [level, links] : levels) {
    if (placed == serving.size()) break;
    std::vector<std::vector<int>> partners(currents.members.size());
    for (const auto& [b, a] : links) partners[b].push_back(a);
    std::vector<int> free;
    for (size_t b = 0; b < partners.size(); ++b) {
      if (partners[b].empty()) continue;
      for (int p : currents.members[b]) {
        if (!used[p]) free.push_back(p);
      }
    }
    std::sort(free.begin(), free.end());
    for (int p : free) {
      int best_class = -1;
      int best_t = 0;
      for (int a : partners[currents.of[p]]) {
        if (cursor[a] == targets.members[a].size()) continue;
        int t = targets.members[a][cursor[a]];
        if (best_class < 0 || t < best_t) {
          best_class = a;
          best_t = t;
        }
      }
      if (best_class < 0) continue;
      ++cursor[best_class];
      ++placed;
      used[p] = true;
      desired[have[p]->id] = serving[best_t]->slots;
    }
  }
  return desired;
}

}  // namespace migserve::controller
