#include "cluster/apply.h"

#include <fmt/format.h>

#include <algorithm>

#include "mig/reconfiguration.h"

namespace migserve::cluster {
namespace {

std::string RefName(const mig::GpuModel& gpu, const InstanceRef& ref) {
  return fmt::format("GPU {} {}@{}", ref.gpu,
                     gpu.profiles.at(ref.instance.profile).name,
                     ref.instance.start);
}

Status Fail(const mig::GpuModel& gpu, const Action& a, std::string_view why) {
  return Status::FailedPrecondition(
      fmt::format("{}: {}", Describe(gpu, a), why));
}

// Returns the slot of `ref`, or null with `why` set.
Slot* FindSlot(ClusterState* state, const InstanceRef& ref, std::string* why) {
  GpuState* g = state->FindGpu(ref.gpu);
  if (g == nullptr) {
    *why = fmt::format("GPU {} is not in the cluster", ref.gpu);
    return nullptr;
  }
  Slot* slot = g->Find(ref.instance);
  if (slot == nullptr) *why = "no such instance on the GPU";
  return slot;
}

Status StartRepartition(const mig::GpuModel& gpu, const Action& a,
                        ClusterState* state) {
  GpuState* g = state->FindGpu(a.at.gpu);
  if (g == nullptr) return Fail(gpu, a, "GPU is not in the cluster");
  for (const mig::Instance& i : a.remove) {
    const Slot* slot = g->Find(i);
    if (slot == nullptr) {
      return Fail(gpu, a,
                  fmt::format("{}@{} is not on the GPU",
                              gpu.profiles[i.profile].name, i.start));
    }
    if (slot->replica) {
      return Fail(
          gpu, a,
          fmt::format("{}@{} still serves {}", gpu.profiles[i.profile].name,
                      i.start, slot->replica->service));
    }
  }
  std::string why;
  if (!mig::IsLegalReconfiguration(gpu, ControllerMigOptions(), g->layout(),
                                   {a.remove, a.add}, nullptr, &why)) {
    return Fail(gpu, a, why);
  }
  return Status::Ok();
}

}  // namespace

std::string Describe(const mig::GpuModel& gpu, const Action& a) {
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kDelete:
      return fmt::format("action {} ({} {} on {})", a.id, KindName(a.kind),
                         a.replica.service, RefName(gpu, a.at));
    case ActionKind::kMigrate:
      return fmt::format("action {} (migrate {} from {} to {})", a.id,
                         a.replica.service, RefName(gpu, a.at),
                         RefName(gpu, a.to));
    case ActionKind::kRepartition:
      return fmt::format("action {} (repartition GPU {})", a.id, a.at.gpu);
  }
  return "?";
}

Status StartAction(const mig::GpuModel& gpu, const Action& a,
                   ClusterState* state) {
  std::string why;
  switch (a.kind) {
    case ActionKind::kCreate: {
      Slot* slot = FindSlot(state, a.at, &why);
      if (slot == nullptr) return Fail(gpu, a, why);
      if (slot->replica) {
        return Fail(gpu, a,
                    "instance already serves " + slot->replica->service);
      }
      return Status::Ok();
    }
    case ActionKind::kDelete:
    case ActionKind::kMigrate: {
      Slot* from = FindSlot(state, a.at, &why);
      if (from == nullptr) return Fail(gpu, a, why);
      if (!from->replica || from->replica->service != a.replica.service) {
        return Fail(gpu, a, "no replica of the service there");
      }
      if (a.kind == ActionKind::kMigrate) {
        Slot* to = FindSlot(state, a.to, &why);
        if (to == nullptr) return Fail(gpu, a, "destination: " + why);
        if (to->replica) {
          return Fail(gpu, a,
                      "destination already serves " + to->replica->service);
        }
      }
      from->replica.reset();
      return Status::Ok();
    }
    case ActionKind::kRepartition:
      return StartRepartition(gpu, a, state);
  }
  return Status::Internal("unknown action kind");
}

Status FinishAction(const mig::GpuModel& gpu, const Action& a,
                    ClusterState* state) {
  std::string why;
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kMigrate: {
      Slot* slot =
          FindSlot(state, a.kind == ActionKind::kCreate ? a.at : a.to, &why);
      if (slot == nullptr) return Fail(gpu, a, why);
      slot->replica = a.replica;
      return Status::Ok();
    }
    case ActionKind::kDelete:
      return Status::Ok();
    case ActionKind::kRepartition: {
      GpuState* g = state->FindGpu(a.at.gpu);
      if (g == nullptr) return Fail(gpu, a, "GPU is not in the cluster");
      std::erase_if(g->slots, [&](const Slot& s) {
        return std::find(a.remove.begin(), a.remove.end(), s.instance) !=
               a.remove.end();
      });
      for (const mig::Instance& i : a.add)
        g->slots.push_back({i, std::nullopt});
      std::sort(
          g->slots.begin(), g->slots.end(),
          [](const Slot& x, const Slot& y) { return x.instance < y.instance; });
      return Status::Ok();
    }
  }
  return Status::Internal("unknown action kind");
}

Status ApplyAction(const mig::GpuModel& gpu, const Action& action,
                   ClusterState* state) {
  MIGSERVE_RETURN_IF_ERROR(StartAction(gpu, action, state));
  return FinishAction(gpu, action, state);
}

bool HasTakenEffect(const Action& a, const ClusterState& state) {
  auto serves = [&](const InstanceRef& ref) {
    const GpuState* g = state.FindGpu(ref.gpu);
    const Slot* slot = g == nullptr ? nullptr : g->Find(ref.instance);
    return slot != nullptr && slot->replica &&
           slot->replica->service == a.replica.service;
  };
  switch (a.kind) {
    case ActionKind::kCreate:
      return serves(a.at);
    case ActionKind::kDelete:
      return !serves(a.at);
    case ActionKind::kMigrate:
      return serves(a.to) && !serves(a.at);
    case ActionKind::kRepartition: {
      const GpuState* g = state.FindGpu(a.at.gpu);
      if (g == nullptr) return false;
      for (const mig::Instance& i : a.add) {
        if (g->Find(i) == nullptr) return false;
      }
      for (const mig::Instance& i : a.remove) {
        bool readded = std::find(a.add.begin(), a.add.end(), i) != a.add.end();
        if (!readded && g->Find(i) != nullptr) return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace migserve::cluster
