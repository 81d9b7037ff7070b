#include "kubernetes/cluster_books.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"

namespace migserve::kubernetes {

ClusterBooks::ClusterBooks(LogSink warn) : warn_(std::move(warn)) {}

void ClusterBooks::Warn(const std::string& message) const {
  if (warn_) warn_(message);
}

void ClusterBooks::SetNode(const std::string& name,
                           std::vector<GpuLayout> now) {
  // The node's GPUs, by index: one range of the sorted GPUs.
  auto by_node = [](const GpuState& g, const std::string& n) {
    return g.id.node < n;
  };
  auto first =
      std::lower_bound(state_.gpus.begin(), state_.gpus.end(), name, by_node);
  auto last = first;
  while (last != state_.gpus.end() && last->id.node == name) ++last;
  std::set<GpuId> changed;
  bool same_gpus = last - first == static_cast<long>(now.size());
  for (size_t i = 0; same_gpus && i < now.size(); ++i) {
    same_gpus = first[static_cast<long>(i)].id.index == static_cast<int>(i) &&
                first[static_cast<long>(i)].model == now[i].model;
  }
  auto slots_of = [](const mig::Layout& layout) {
    std::vector<Slot> slots;
    for (const mig::Instance& instance : layout.instances()) {
      slots.push_back({instance, std::nullopt});
    }
    return slots;
  };
  if (same_gpus) {
    // A repartition: only the GPUs whose layout changed.
    for (size_t i = 0; i < now.size(); ++i) {
      GpuState& g = first[static_cast<long>(i)];
      g.held_by = now[i].held_by;
      if (g.layout() == now[i].layout) continue;
      g.slots = slots_of(now[i].layout);
      changed.insert(g.id);
    }
  } else {
    for (auto g = first; g != last; ++g) changed.insert(g->id);
    std::vector<GpuState> gpus;
    for (size_t i = 0; i < now.size(); ++i) {
      gpus.push_back({{name, static_cast<int>(i)},
                      now[i].model,
                      slots_of(now[i].layout),
                      now[i].held_by});
      changed.insert(gpus.back().id);
    }
    auto at = state_.gpus.erase(first, last);
    state_.gpus.insert(at, std::make_move_iterator(gpus.begin()),
                       std::make_move_iterator(gpus.end()));
    ++gpus_version_;
  }
  for (const GpuId& id : changed) SettleGpu(id);
}

void ClusterBooks::SetPod(const std::string& name,
                          std::optional<PodClaim> claim) {
  std::set<SlotKey> touched;
  auto it = claims_.find(name);
  if (it != claims_.end()) {
    SlotKey old = KeyOf(it->second);
    auto pods = claimants_.find(old);
    pods->second.erase(name);
    if (pods->second.empty()) claimants_.erase(pods);
    claims_.erase(it);
    touched.insert(old);
  }
  if (claim) {
    SlotKey key = KeyOf(*claim);
    claimants_[key].insert(name);
    claims_.emplace(name, std::move(*claim));
    touched.insert(key);
  }
  std::set<GpuId> gpus;
  for (const SlotKey& key : touched) {
    Settle(key);
    gpus.insert(std::get<0>(key));
  }
  for (const GpuId& id : gpus) books_.Touch(state_, id, nullptr);
}

void ClusterBooks::Settle(const SlotKey& key) {
  const auto& [id, profile, start] = key;
  GpuState* g = state_.FindGpu(id);
  int p = g == nullptr ? -1 : ProfileOfLabel(*g->model, profile);
  Slot* slot = p < 0 ? nullptr : g->Find({p, start});
  auto pods = claimants_.find(key);
  if (slot == nullptr) {
    if (pods == claimants_.end()) return;
    for (const std::string& name : pods->second) {
      Warn(
          fmt::format("pod {}: no instance {}@{} on GPU {}/{} of the "
                      "cluster; not counted",
                      name, profile, start, id.node, id.index));
    }
    return;
  }
  slot->replica.reset();
  if (pods == claimants_.end()) return;
  const std::set<std::string>& names = pods->second;
  if (names.size() == 1) {
    slot->replica = claims_.at(*names.begin()).replica;
    return;
  }
  for (auto other = std::next(names.begin()); other != names.end(); ++other) {
    Warn(
        fmt::format("pods {} and {} both claim instance {}@{} on GPU "
                    "{}/{}; neither is counted",
                    *names.begin(), *other, profile, start, id.node, id.index));
  }
}

void ClusterBooks::SettleGpu(const GpuId& id) {
  auto first = claimants_.lower_bound(
      {id, std::string(), std::numeric_limits<int>::min()});
  std::vector<SlotKey> keys;
  for (auto it = first; it != claimants_.end() && std::get<0>(it->first) == id;
       ++it) {
    keys.push_back(it->first);
  }
  for (const SlotKey& key : keys) Settle(key);
  books_.Touch(state_, id, nullptr);
}

}  // namespace migserve::kubernetes
