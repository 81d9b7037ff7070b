#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>
#include <tuple>

#include "cluster/apply.h"
#include "controller/exchange_planner.h"
#include "mig/reconfiguration.h"

namespace migserve::controller::exchange {

std::vector<mig::Instance> Planner::Overlapping(
    const GpuState& g, const std::vector<mig::Instance>& adding) const {
  std::vector<mig::Instance> overlapping;
  for (const Slot& s : g.slots) {
    if (std::any_of(adding.begin(), adding.end(), [&](const mig::Instance& i) {
          return mig::Overlaps(*g.model, s.instance, i);
        })) {
      overlapping.push_back(s.instance);
    }
  }
  return overlapping;
}

bool Planner::PrepareLayouts() {
  bool progress = false;
  for (const auto& [g, slots] : desired_) {
    GpuState* gs = state_.FindGpu(g);
    std::vector<mig::Instance> add;
    for (const Slot& d : slots) {
      if (!d.replica || gs->Find(d.instance) != nullptr) continue;
      bool blocked =
          std::any_of(gs->slots.begin(), gs->slots.end(), [&](const Slot& s) {
            return s.replica &&
                   mig::Overlaps(*gs->model, s.instance, d.instance);
          });
      if (!blocked) add.push_back(d.instance);
    }
    if (add.empty()) continue;
    // No instance overlapping `add` holds a replica, so all may go.
    if (Repartition(g, Overlapping(*gs, add), add)) {
      progress = true;
      continue;
    }
    for (const mig::Instance& i : add) {
      progress |= Repartition(g, Overlapping(*gs, {i}), {i});
    }
  }
  return progress;
}

std::optional<InstanceRef> Planner::MigrationSource(const GpuId& g,
                                                    const Slot& d) const {
  if (!options_.use_migrate) return std::nullopt;
  const std::string& node = g.node;
  const mig::GpuModel* model = &Model(g);
  std::optional<InstanceRef> best;
  int best_rank = 0;
  for (const GpuState& other : state_.gpus) {
    for (const Slot& s : other.slots) {
      // The cheap tests first: this runs for every slot of the cluster.
      if (!s.replica || other.model != model ||
          s.instance.profile != d.instance.profile ||
          (!options_.remote_migrate && other.id.node != node) ||
          Wanted(other.id, s) || !s.replica->Covers(*d.replica) ||
          s.replica->batch != d.replica->batch ||
          s.replica->procs != d.replica->procs ||
          !CanCover(s.replica->service, s.replica->credit, other.id)) {
        continue;
      }
      int rank = other.id == g ? 0 : other.id.node == node ? 1 : 2;
      if (!best || rank < best_rank) {
        best = InstanceRef{other.id, other.model, s.instance};
        best_rank = rank;
      }
    }
  }
  return best;
}

bool Planner::FillSlots() {
  bool progress = false;
  for (const auto& [g, slots] : desired_) {
    for (const Slot& d : slots) {
      const Slot* dest = state_.FindGpu(g)->Find(d.instance);
      if (!d.replica || dest == nullptr || dest->replica) continue;
      InstanceRef to = Ref(g, d.instance);
      Action a;
      a.replica = *d.replica;
      if (std::optional<InstanceRef> source = MigrationSource(g, d)) {
        a.kind = ActionKind::kMigrate;
        a.at = *source;
        a.to = to;
        a.replica =
            *state_.FindGpu(source->gpu)->Find(source->instance)->replica;
        Cover(a.replica.service, a.replica.credit, a.at.gpu, &a.after);
        for (int id : TouchDeps(a.at)) a.after.push_back(id);
      } else {
        a.kind = ActionKind::kCreate;
        a.at = to;
      }
      for (int id : TouchDeps(to)) a.after.push_back(id);
      InstanceRef from = a.at;
      int id = Emit(std::move(a));
      Touch(to, id);
      Touch(from, id);
      progress = true;
    }
  }
  return progress;
}

bool Planner::DeleteUnneeded() {
  // Replicas in the way of a target instance go first.
  std::vector<std::tuple<int, InstanceRef, Replica>> unneeded;
  for (const GpuState& g : state_.gpus) {
    for (const Slot& s : g.slots) {
      if (!s.replica || Wanted(g.id, s)) continue;
      bool blocks = false;
      if (auto it = desired_.find(g.id); it != desired_.end()) {
        for (const Slot& d : it->second) {
          blocks |=
              d.replica && mig::Overlaps(*g.model, d.instance, s.instance);
        }
      }
      unneeded.emplace_back(blocks ? 0 : 1,
                            InstanceRef{g.id, g.model, s.instance}, *s.replica);
    }
  }
  std::stable_sort(unneeded.begin(), unneeded.end(),
                   [](const auto& x, const auto& y) {
                     return std::get<0>(x) < std::get<0>(y);
                   });
  bool progress = false;
  for (const auto& [blocks, ref, replica] : unneeded) {
    Action a;
    if (!Cover(replica.service, replica.credit, ref.gpu, &a.after)) {
      continue;
    }
    a.kind = ActionKind::kDelete;
    a.at = ref;
    a.replica = replica;
    for (int id : TouchDeps(ref)) a.after.push_back(id);
    Touch(ref, Emit(std::move(a)));
    progress = true;
  }
  return progress;
}

std::optional<InstanceRef> Planner::FindRoom(const mig::GpuModel& model,
                                             int profile,
                                             const std::string& node,
                                             const std::string& service) {
  // With survive, a copy in a domain the service is not in yet counts in
  // every view but that domain's; so those domains go first.
  bool spread = views_[service].size() > 1;
  std::optional<InstanceRef> best;
  std::tuple<int, int, int, int> best_key;
  for (const GpuState& g : state_.gpus) {
    if (g.model != &model) continue;
    auto wanted = desired_.find(g.id);
    bool target = wanted != desired_.end();
    int kind = target ? 2 : g.HasReplica() ? 1 : 0;
    for (int start : model.profiles[profile].starts) {
      mig::Instance y{profile, start};
      bool clash =
          std::any_of(g.slots.begin(), g.slots.end(), [&](const Slot& s) {
            return s.replica && mig::Overlaps(model, s.instance, y);
          });
      if (target) {
        for (const Slot& d : wanted->second) {
          clash |= mig::Overlaps(model, d.instance, y);
        }
      }
      if (clash) continue;
      bool repartition = g.Find(y) == nullptr;
      if (repartition && !mig::IsLegalReconfiguration(
                             model, cluster::ControllerMigOptions(), g.layout(),
                             {Overlapping(g, {y}), {y}}, nullptr)) {
        continue;
      }
      std::tuple<int, int, int, int> key{spread && InDomain(service, g) ? 1 : 0,
                                         kind, g.id.node == node ? 0 : 1,
                                         repartition ? 1 : 0};
      if (!best || key < best_key) {
        best = InstanceRef{g.id, g.model, y};
        best_key = key;
      }
    }
  }
  return best;
}

bool Planner::MakeRoom(std::string* short_service) {
  for (const auto& [g, slots] : desired_) {
    const GpuState* gs = state_.FindGpu(g);
    for (const Slot& d : slots) {
      if (!Needed(g, d)) continue;
      for (const Slot& b : gs->slots) {
        if (!b.replica || Wanted(g, b) ||
            !mig::Overlaps(*gs->model, b.instance, d.instance)) {
          continue;
        }
        if (short_service->empty()) *short_service = b.replica->service;
        std::optional<InstanceRef> room = FindRoom(
            *gs->model, b.instance.profile, g.node, b.replica->service);
        if (!room) continue;
        Replica copy = *b.replica;
        GpuState* host = state_.FindGpu(room->gpu);
        if (host->Find(room->instance) == nullptr) {
          Repartition(room->gpu, Overlapping(*host, {room->instance}),
                      {room->instance});
        }
        Action a;
        a.kind = ActionKind::kCreate;
        a.at = *room;
        a.replica = copy;
        a.after = TouchDeps(*room);
        Touch(*room, Emit(std::move(a)));
        return true;
      }
    }
  }
  if (short_service->empty()) {
    for (const GpuState& g : state_.gpus) {
      for (const Slot& s : g.slots) {
        if (s.replica && !Wanted(g.id, s)) {
          *short_service = s.replica->service;
          return false;
        }
      }
    }
  }
  return false;
}

void Planner::FinalLayouts() {
  for (const auto& [g, slots] : desired_) {
    std::vector<mig::Instance> instances;
    for (const Slot& s : slots) instances.push_back(s.instance);
    mig::Reconfiguration change =
        mig::Diff(state_.FindGpu(g)->layout(), mig::Layout(instances));
    if (change.remove.empty() && change.add.empty()) continue;
    bool done = Repartition(g, change.remove, change.add);
    assert(done);
    (void)done;
  }
}

StatusOr<TransitionPlan> Planner::Run() {
  std::map<std::string, double> capacity = state_.Capacity();
  std::set<std::string> services;
  for (const auto& [s, value] : capacity) services.insert(s);
  for (const auto& [s, value] : goal_.required_before) services.insert(s);
  for (const auto& [s, value] : goal_.required_after) services.insert(s);
  std::map<std::string, double> kept = KeptAfterLoss(state_, goal_);
  std::map<std::string, std::map<std::string, double>> by_domain;
  if (goal_.survive)
    by_domain = CapacityByDomain(state_, goal_.survive->domain);
  for (const std::string& s : services) {
    double floor = goal_.Floor(s);
    if (capacity[s] < floor - kEpsilon) {
      return Status::FailedPrecondition(fmt::format(
          "the current deployment gives service {} {:.6g} req/s, below the "
          "{:.6g} it must keep",
          s, capacity[s], floor));
    }
    StartViews(s, capacity[s], by_domain[s], kept[s]);
  }
  size_t limit = 16 * (plan_.actions.size() + 64);
  for (const GpuState& g : state_.gpus) limit += 16 * (g.slots.size() + 8);
  for (size_t pass = 0; !Done(); ++pass) {
    bool progress = PrepareLayouts();
    progress |= FillSlots();
    progress |= DeleteUnneeded();
    if (!progress) {
      std::string short_service;
      if (!MakeRoom(&short_service)) {
        return Status::FailedPrecondition(fmt::format(
            "cannot keep service {} at min(before, after) during the "
            "transition: no spare room for a temporary replica (add "
            "--spare-gpus)",
            short_service));
      }
    }
    if (pass > limit || !error_.ok()) break;
  }
  MIGSERVE_RETURN_IF_ERROR(error_);
  if (!Done()) return Status::Internal("planner made no progress");
  FinalLayouts();
  MIGSERVE_RETURN_IF_ERROR(error_);
  return plan_;
}

}  // namespace migserve::controller::exchange
