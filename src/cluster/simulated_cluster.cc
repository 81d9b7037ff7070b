#include "cluster/simulated_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cluster/apply.h"

namespace migserve::cluster {

Status ActionDurations::Validate() const {
  for (double d :
       {create_s, delete_s, local_migrate_s, remote_migrate_s, repartition_s}) {
    if (!(d > 0 && d <= kMaxActionSeconds)) {
      return Status::InvalidArgument(fmt::format(
          "action durations must be above 0 and at most {:g} seconds, got {}",
          kMaxActionSeconds, d));
    }
  }
  if (!(claim_s >= 0 && claim_s <= kMaxActionSeconds)) {
    return Status::InvalidArgument(
        fmt::format("seconds per claim must be in [0, {:g}], got {}",
                    kMaxActionSeconds, claim_s));
  }
  if (!(jitter >= 0 && jitter < 1)) {
    return Status::InvalidArgument("jitter must be in [0, 1)");
  }
  return Status::Ok();
}

SimulatedCluster::SimulatedCluster(ClusterState initial,
                                   ActionDurations durations, uint64_t seed,
                                   Faults faults)
    : state_(std::move(initial)),
      durations_(durations),
      rng_(seed),
      faults_(faults) {
  Rebuild();
  Record();
}

double SimulatedCluster::Duration(const Action& a, bool local) {
  double base = 0;
  switch (a.kind) {
    case ActionKind::kCreate:
      base = durations_.create_s;
      break;
    case ActionKind::kDelete:
      base = durations_.delete_s;
      break;
    case ActionKind::kMigrate:
      base = local ? durations_.local_migrate_s : durations_.remote_migrate_s;
      break;
    case ActionKind::kRepartition:
      base = durations_.claim_s > 0 && !a.add.empty()
                 ? durations_.claim_s * static_cast<double>(a.add.size())
                 : durations_.repartition_s;
      break;
  }
  std::uniform_real_distribution<double> scale(1 - durations_.jitter,
                                               1 + durations_.jitter);
  return base * scale(rng_);
}

Status SimulatedCluster::Guard(const Action& a) const {
  if (!guard_) return Status::Ok();
  return guard_(a, state_, books_.capacity(), {});
}

Status SimulatedCluster::Start(const Action& action) {
  bool keeps_source = action.kind == ActionKind::kMigrate &&
                      migrate_source_ == MigrateSource::kGoneWhenReady;
  if (action.kind == ActionKind::kDelete ||
      (action.kind == ActionKind::kMigrate && !keeps_source)) {
    MIGSERVE_RETURN_IF_ERROR(Guard(action));
  }
  std::optional<Replica> source;
  if (keeps_source) {
    const Slot* from = state_.FindServing(action.at.gpu, action.at.instance,
                                          action.replica.service);
    if (from != nullptr) source = from->replica;
  }
  MIGSERVE_RETURN_IF_ERROR(StartAction(action, &state_));
  if (source) {
    state_.FindGpu(action.at.gpu)->Find(action.at.instance)->replica = source;
  }
  bool local = true;
  if (action.kind == ActionKind::kMigrate) {
    local = action.at.gpu.node == action.to.gpu.node;
  }
  double end = now_s_ + Duration(action, local);
  timeline_.push_back({action, local, now_s_, end, true});
  running_.emplace(std::pair(end, action.id),
                   InFlight{action, timeline_.size() - 1});
  ++starts_[action.id];
  for (const GpuId& id : GpusOf(action)) {
    ++acting_[id];
    Touch(id);
  }
  Record();
  return Status::Ok();
}

std::vector<int> SimulatedCluster::Running() const {
  std::vector<int> ids;
  for (const auto& [when, r] : running_) ids.push_back(r.action.id);
  return ids;
}

void SimulatedCluster::LoseGpu() {
  now_s_ = std::max(now_s_, faults_.lose_at_s);
  std::erase_if(state_.gpus, [&](const GpuState& g) {
    return g.id == faults_.lose_gpu || g.id.node == faults_.lose_node;
  });
  faults_.lose_gpu.reset();
  faults_.lose_node.reset();
  GpusChanged();
}

void SimulatedCluster::LoseNode(const std::string& node) {
  std::erase_if(state_.gpus,
                [&](const GpuState& g) { return g.id.node == node; });
  GpusChanged();
}

void SimulatedCluster::GpusChanged() {
  ++gpus_version_;
  Rebuild();
  Record();
}

void SimulatedCluster::AddGpus(const std::vector<GpuState>& gpus) {
  state_.gpus.insert(state_.gpus.end(), gpus.begin(), gpus.end());
  std::sort(state_.gpus.begin(), state_.gpus.end(),
            [](const GpuState& a, const GpuState& b) { return a.id < b.id; });
  GpusChanged();
}

void SimulatedCluster::HoldGpu(const GpuId& gpu, const std::string& holder) {
  if (GpuState* g = state_.FindGpu(gpu)) g->held_by = holder;
}

Status SimulatedCluster::EvictReplica(const GpuId& gpu,
                                      const mig::Instance& instance) {
  GpuState* g = state_.FindGpu(gpu);
  Slot* slot = g == nullptr ? nullptr : g->Find(instance);
  if (slot == nullptr || !slot->replica) {
    return Status::NotFound(fmt::format("no replica on {} at start {}",
                                        gpu.ToString(), instance.start));
  }
  slot->replica.reset();
  Touch(gpu);
  Record();
  return Status::Ok();
}

StatusOr<ActionResult> SimulatedCluster::WaitAny() {
  if (running_.empty()) {
    return Status::FailedPrecondition("no action is running");
  }
  if ((faults_.lose_gpu || faults_.lose_node) &&
      faults_.lose_at_s <= running_.begin()->first.first) {
    LoseGpu();
  }
  double end_s = running_.begin()->first.first;
  InFlight done = running_.begin()->second;
  running_.erase(running_.begin());
  now_s_ = std::max(now_s_, end_s);
  ActionResult result{done.action.id, Status::Ok()};
  if (done.action.id == faults_.fail_action) {
    faults_.fail_action = -1;
    result.status = Status::Unavailable(
        fmt::format("{}: injected failure", Describe(done.action)));
    if (done.action.kind == ActionKind::kMigrate) {
      // The replica at the source was never stopped: put it back.
      GpuState* g = state_.FindGpu(done.action.at.gpu);
      Slot* from = g == nullptr ? nullptr : g->Find(done.action.at.instance);
      if (from != nullptr) from->replica = done.action.replica;
    }
  } else if (const GpuState* held = state_.FindGpu(done.action.at.gpu);
             done.action.kind == ActionKind::kRepartition &&
             !done.action.add.empty() && held != nullptr &&
             !held->held_by.empty()) {
    result.status = Status::Unavailable(
        fmt::format("{}: a device it adds is held by claim {}",
                    Describe(done.action), held->held_by));
  } else if (done.action.kind == ActionKind::kMigrate &&
             migrate_source_ == MigrateSource::kGoneWhenReady) {
    // The destination is ready: the source goes only if the guard allows.
    Status removal = Guard(done.action);
    GpuState* g = state_.FindGpu(done.action.at.gpu);
    Slot* from = g == nullptr ? nullptr : g->Find(done.action.at.instance);
    std::optional<Replica> source;
    if (from != nullptr) source.swap(from->replica);
    result.status = FinishAction(done.action, &state_);
    if (!removal.ok()) {
      if (from != nullptr) from->replica = std::move(source);
      result.status = removal.WithPrefix(Describe(done.action));
    }
  } else {
    result.status = FinishAction(done.action, &state_);
  }
  timeline_[done.entry].end_s = now_s_;
  timeline_[done.entry].ok = result.status.ok();
  for (const GpuId& id : GpusOf(done.action)) {
    if (--acting_[id] == 0) acting_.erase(id);
    Touch(id);
  }
  Record();
  return result;
}

std::vector<GpuId> SimulatedCluster::GpusOf(const Action& action) const {
  std::vector<GpuId> ids = {action.at.gpu};
  if (action.kind == ActionKind::kMigrate &&
      !(action.to.gpu == action.at.gpu)) {
    ids.push_back(action.to.gpu);
  }
  return ids;
}

void SimulatedCluster::Touch(const GpuId& id) {
  books_.Touch(state_, id, &changed_);
  MarkBusy(id);
}

void SimulatedCluster::MarkBusy(const GpuId& id) {
  const GpuState* g = state_.FindGpu(id);
  if ((g != nullptr && g->HasReplica()) || acting_.count(id) > 0) {
    busy_.insert(id);
  } else {
    busy_.erase(id);
  }
}

void SimulatedCluster::Rebuild() {
  books_.Rebuild(state_, &changed_);
  std::set<GpuId> ids = busy_;
  for (const auto& [id, count] : acting_) ids.insert(id);
  for (const GpuState& g : state_.gpus) ids.insert(g.id);
  for (const GpuId& id : ids) MarkBusy(id);
}

void SimulatedCluster::Record() {
  // Every service seen so far, at 0 once it has no replica; only those a
  // change touched can differ from the last sample.
  bool differs = capacity_history_.empty();
  for (const std::string& service : changed_) {
    auto it = books_.capacity().find(service);
    double value = it == books_.capacity().end() ? 0 : it->second;
    auto [now, fresh] = capacity_now_.try_emplace(service, value);
    if (fresh || now->second != value) differs = true;
    now->second = value;
    auto [low, first] = min_capacity_.try_emplace(service, value);
    if (!first) low->second = std::min(low->second, value);
  }
  changed_.clear();
  if (differs) {
    // Changes at one moment are one step; the initial state stays.
    if (capacity_history_.size() > 1 &&
        capacity_history_.back().time_s == now_s_) {
      capacity_history_.back().capacity = capacity_now_;
    } else {
      capacity_history_.push_back({now_s_, capacity_now_});
    }
  }
  peak_gpus_ = std::max(peak_gpus_, static_cast<int>(busy_.size()));
}

}  // namespace migserve::cluster
