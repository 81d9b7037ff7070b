#include "controller/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>
#include <tuple>

#include "cluster/apply.h"
#include "controller/target_mapping.h"
#include "mig/reconfiguration.h"
#include "util/tolerance.h"

namespace migserve::controller {
namespace {

using cluster::Action;
using cluster::ActionKind;
using cluster::ClusterState;
using cluster::GpuId;
using cluster::GpuState;
using cluster::InstanceRef;
using cluster::Replica;
using cluster::Slot;
using cluster::TransitionPlan;

constexpr double kEpsilon = kCapacityTolerance;

class Planner {
 public:
  Planner(const ClusterState& current, DesiredLayouts desired,
          const TransitionGoal& goal, const PlannerOptions& options)
      : state_(current),
        desired_(std::move(desired)),
        goal_(goal),
        options_(options) {}

  StatusOr<TransitionPlan> Run();

 private:
  const mig::GpuModel& Model(const GpuId& g) const {
    return *state_.FindGpu(g)->model;
  }
  InstanceRef Ref(const GpuId& g, const mig::Instance& instance) const {
    return {g, &Model(g), instance};
  }
  const Slot* DesiredSlot(const GpuId& g, const mig::Instance& instance) const;
  // True if `slot` of GPU `g` holds the replica the target wants there.
  bool Wanted(const GpuId& g, const Slot& slot) const;
  bool Needed(const GpuId& g, const Slot& desired) const;
  bool Done() const;

  // What a service must keep as seen by one view of the cluster: first the
  // plain view (every GPU; its floor) and, with survive, second the view
  // for the domains it has not touched (every GPU; what it keeps after a
  // loss), which a new domain's view starts from, then one per failure
  // domain it touches (every GPU outside it; the same).
  struct View {
    std::optional<std::string> excluded;  // the domain left out
    // The view's capacity, once every emitted action has run, above what
    // it must keep, less what deletes have taken from it.
    double slack = 0;
    // Creates seen by the view with gain not yet promised to a delete.
    std::vector<std::pair<int, double>> unpaired;
  };

  // The domain of GPU `g` under the goal's survive.
  std::string Domain(const GpuId& g) const {
    return DomainOf(g, goal_.survive->domain);
  }
  // The domain of GPU `g` where `views` tell domains apart, else "".
  std::string DomainIn(const std::vector<View>& views, const GpuId& g) const {
    return views.size() > 1 ? Domain(g) : std::string();
  }
  // True if `view` sees a change in `domain`.
  static bool Sees(const View& view, const std::string& domain) {
    return !view.excluded || *view.excluded != domain;
  }
  // Takes `throughput` of `service`, lost on GPU `g`, from every view that
  // sees it: first its slack, then creates not yet paired (their ids go to
  // `after`). Returns false, taking nothing, if a view has not enough.
  bool Cover(const std::string& service, double throughput, const GpuId& g,
             std::vector<int>* after);
  bool CanCover(const std::string& service, double throughput,
                const GpuId& g) const;
  // Starts the views of `service` (its slack from `capacity` in the
  // cluster and `by_domain` per domain) when it keeps `kept` after a loss.
  void StartViews(const std::string& service, double capacity,
                  const std::map<std::string, double>& by_domain, double kept);
  // True if `service` has a replica in the failure domain of GPU `g`.
  bool InDomain(const std::string& service, const GpuState& g) const;

  std::vector<int> TouchDeps(const InstanceRef& ref) const;
  void Touch(const InstanceRef& ref, int id) { last_touch_[Key(ref)] = id; }
  static std::pair<GpuId, mig::Instance> Key(const InstanceRef& ref) {
    return {ref.gpu, ref.instance};
  }
  int Emit(Action action);
  // Emits a repartition of GPU `g` unless the result would be illegal.
  bool Repartition(const GpuId& g, std::vector<mig::Instance> remove,
                   std::vector<mig::Instance> add);

  // Returns the instances of `g` that share memory with any of `adding`.
  std::vector<mig::Instance> Overlapping(
      const GpuState& g, const std::vector<mig::Instance>& adding) const;
  // Returns the best unneeded replica to migrate into target slot `d` of
  // GPU `g` (same size, batch and processes; same GPU, then same node), or
  // nullopt.
  std::optional<InstanceRef> MigrationSource(const GpuId& g,
                                             const Slot& d) const;

  bool PrepareLayouts();
  bool FillSlots();
  bool DeleteUnneeded();
  // Creates a temporary replica for a service whose replica blocks a target
  // instance. Returns false and names the service if there is no room.
  bool MakeRoom(std::string* short_service);
  // Returns where a replica of `profile` of `model` could go for a while (a
  // GPU of that model), or nullopt.
  std::optional<InstanceRef> FindRoom(const mig::GpuModel& model, int profile,
                                      const std::string& node,
                                      const std::string& service);
  void FinalLayouts();

  ClusterState state_;  // the cluster once every emitted action has run
  DesiredLayouts desired_;
  const TransitionGoal& goal_;
  PlannerOptions options_;
  TransitionPlan plan_;
  Status error_;
  std::map<std::pair<GpuId, mig::Instance>, int> last_touch_;
  std::map<GpuId, int> last_repartition_;
  // Per service: its views, the plain one first.
  std::map<std::string, std::vector<View>> views_;
};

const Slot* Planner::DesiredSlot(const GpuId& g,
                                 const mig::Instance& instance) const {
  auto it = desired_.find(g);
  if (it == desired_.end()) return nullptr;
  for (const Slot& s : it->second) {
    if (s.instance == instance) return &s;
  }
  return nullptr;
}

bool Planner::Wanted(const GpuId& g, const Slot& slot) const {
  const Slot* want = DesiredSlot(g, slot.instance);
  return slot.replica && want != nullptr && want->replica &&
         slot.replica->Covers(*want->replica);
}

bool Planner::Needed(const GpuId& g, const Slot& desired) const {
  if (!desired.replica) return false;
  const Slot* have = state_.FindGpu(g)->Find(desired.instance);
  return have == nullptr || !Wanted(g, *have);
}

bool Planner::Done() const {
  for (const auto& [g, slots] : desired_) {
    for (const Slot& d : slots) {
      if (Needed(g, d)) return false;
    }
  }
  for (const GpuState& g : state_.gpus) {
    for (const Slot& s : g.slots) {
      if (s.replica && !Wanted(g.id, s)) return false;
    }
  }
  return true;
}

bool Planner::CanCover(const std::string& service, double throughput,
                       const GpuId& g) const {
  auto it = views_.find(service);
  if (it == views_.end()) return throughput <= kEpsilon;
  std::string domain = DomainIn(it->second, g);
  for (const View& v : it->second) {
    if (!Sees(v, domain)) continue;
    double available = v.slack;
    for (const auto& [id, left] : v.unpaired) available += left;
    if (available < throughput - kEpsilon) return false;
  }
  return true;
}

bool Planner::Cover(const std::string& service, double throughput,
                    const GpuId& g, std::vector<int>* after) {
  if (!CanCover(service, throughput, g)) return false;
  std::vector<View>& views = views_[service];
  std::string domain = DomainIn(views, g);
  for (View& v : views) {
    if (!Sees(v, domain)) continue;
    double need = throughput;
    double take = std::min(v.slack, need);
    v.slack -= take;
    need -= take;
    for (auto& [id, left] : v.unpaired) {
      if (need <= kEpsilon) break;
      double use = std::min(left, need);
      left -= use;
      need -= use;
      after->push_back(id);
    }
    std::erase_if(v.unpaired,
                  [](const auto& entry) { return entry.second <= kEpsilon; });
  }
  return true;
}

void Planner::StartViews(const std::string& service, double capacity,
                         const std::map<std::string, double>& by_domain,
                         double kept) {
  std::vector<View>& views = views_[service];
  views.push_back(
      {std::nullopt, std::max(0.0, capacity - goal_.Floor(service)), {}});
  if (kept <= kEpsilon) return;
  views.push_back({std::nullopt, std::max(0.0, capacity - kept), {}});
  for (const auto& [domain, value] : by_domain) {
    views.push_back({domain, std::max(0.0, capacity - value - kept), {}});
  }
}

bool Planner::InDomain(const std::string& service, const GpuState& g) const {
  auto holds = [&](const GpuState& h) {
    return std::any_of(h.slots.begin(), h.slots.end(), [&](const Slot& s) {
      return s.replica && s.replica->service == service;
    });
  };
  if (goal_.survive->domain == workload::FailureDomain::kGpu) return holds(g);
  return std::any_of(
      state_.gpus.begin(), state_.gpus.end(),
      [&](const GpuState& h) { return h.id.node == g.id.node && holds(h); });
}

std::vector<int> Planner::TouchDeps(const InstanceRef& ref) const {
  auto it = last_touch_.find(Key(ref));
  return it == last_touch_.end() ? std::vector<int>{}
                                 : std::vector<int>{it->second};
}

int Planner::Emit(Action action) {
  action.id = options_.first_id + static_cast<int>(plan_.actions.size());
  std::sort(action.after.begin(), action.after.end());
  action.after.erase(std::unique(action.after.begin(), action.after.end()),
                     action.after.end());
  Status applied = cluster::ApplyAction(action, &state_);
  assert(applied.ok());
  if (!applied.ok() && error_.ok()) {
    error_ = Status::Internal("planner emitted an impossible action: " +
                              applied.message());
  }
  if (double gain = action.GainAtFinish(); gain > 0) {
    const std::string& service = action.replica.service;
    std::vector<View>& views = views_[service];
    std::string domain = DomainIn(views, action.GainGpu());
    if (views.size() > 1) {
      // A domain the service has not touched starts as that view.
      auto it = std::find_if(views.begin(), views.end(), [&](const View& v) {
        return v.excluded == domain;
      });
      if (it == views.end()) {
        View fresh = views[1];
        fresh.excluded = domain;
        views.push_back(std::move(fresh));
      }
    }
    for (View& v : views) {
      if (Sees(v, domain)) v.unpaired.emplace_back(action.id, gain);
    }
  }
  plan_.actions.push_back(std::move(action));
  return plan_.actions.back().id;
}

bool Planner::Repartition(const GpuId& g, std::vector<mig::Instance> remove,
                          std::vector<mig::Instance> add) {
  GpuState* gs = state_.FindGpu(g);
  if (!mig::IsLegalReconfiguration(*gs->model, cluster::ControllerMigOptions(),
                                   gs->layout(), {remove, add}, nullptr)) {
    return false;
  }
  Action a;
  a.kind = ActionKind::kRepartition;
  a.at.gpu = g;
  a.at.model = gs->model;
  if (auto it = last_repartition_.find(g); it != last_repartition_.end()) {
    a.after.push_back(it->second);
  }
  for (const mig::Instance& i : remove) {
    for (int id : TouchDeps(Ref(g, i))) a.after.push_back(id);
  }
  a.remove = remove;
  a.add = add;
  int id = Emit(std::move(a));
  last_repartition_[g] = id;
  for (const mig::Instance& i : remove) Touch(Ref(g, i), id);
  for (const mig::Instance& i : add) Touch(Ref(g, i), id);
  return true;
}

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

}  // namespace

TransitionGoal MakeGoal(const deployment::Deployment& from,
                        const deployment::Deployment& to) {
  TransitionGoal goal;
  for (const workload::Service& s : from.services) {
    goal.required_before[s.name] = s.throughput;
  }
  for (const workload::Service& s : to.services) {
    goal.required_after[s.name] = s.throughput;
  }
  goal.target_gpus = to.UsedGpus();
  goal.survive = to.survive;
  return goal;
}

TransitionGoal GoalFromObserved(const ClusterState& observed,
                                const deployment::Deployment& target) {
  TransitionGoal goal = MakeGoal(target, target);
  goal.required_before = observed.Capacity();
  return goal;
}

TransitionGoal GoalKeeping(const ClusterState& observed,
                           const deployment::Deployment& target,
                           const std::map<std::string, double>& before) {
  TransitionGoal goal = MakeGoal(target, target);
  goal.required_before = before;
  KeepWhatIsLeft(observed.Capacity(), &goal);
  return goal;
}

StatusOr<TransitionPlan> PlanTransition(const ClusterState& current,
                                        const deployment::Deployment& target,
                                        const TransitionGoal& goal,
                                        const PlannerOptions& options) {
  MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts desired, MapTarget(current, target));
  return Planner(current, std::move(desired), goal, options).Run();
}

StatusOr<PlannedTransition> PlanSurvivingIfPossible(
    const ClusterState& current, const deployment::Deployment& target,
    const TransitionGoal& goal, const PlannerOptions& options) {
  PlannedTransition out{{}, goal, {}};
  StatusOr<TransitionPlan> plan =
      PlanTransition(current, target, goal, options);
  // Whatever stopped it (no room, or no progress), the floors alone may
  // still be kept; where they cannot either, their error is the answer.
  if (!plan.ok() && goal.survive) {
    out.survive_dropped = plan.status().message();
    out.goal.survive.reset();
    plan = PlanTransition(current, target, out.goal, options);
  }
  if (!plan.ok()) return plan.status();
  out.plan = std::move(*plan);
  return out;
}

}  // namespace migserve::controller
