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

}  // namespace migserve::controller::exchange
