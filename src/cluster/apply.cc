#include "cluster/apply.h"

#include <fmt/format.h>

#include <algorithm>

#include "mig/reconfiguration.h"

namespace migserve::cluster {
namespace {

Status Fail(const Action& a, std::string_view why) {
  return Status::FailedPrecondition(fmt::format("{}: {}", Describe(a), why));
}

// Returns the slot of `ref`, or null with `why` set.
Slot* FindSlot(ClusterState* state, const InstanceRef& ref, std::string* why) {
  GpuState* g = state->FindGpu(ref.gpu);
  if (g == nullptr) {
    *why = fmt::format("GPU {} is not in the cluster", ref.gpu.ToString());
    return nullptr;
  }
  if (g->model != ref.model) {
    *why = fmt::format("GPU {} is {}, not {}", ref.gpu.ToString(),
                       g->model->name, ref.model->name);
    return nullptr;
  }
  Slot* slot = g->Find(ref.instance);
  if (slot == nullptr) *why = "no such instance on the GPU";
  return slot;
}

Status StartRepartition(const Action& a, ClusterState* state) {
  GpuState* g = state->FindGpu(a.at.gpu);
  if (g == nullptr) return Fail(a, "GPU is not in the cluster");
  if (g->model != a.at.model) {
    return Fail(a, fmt::format("the GPU is {}, not {}", g->model->name,
                               a.at.model->name));
  }
  const mig::GpuModel& gpu = *g->model;
  for (const mig::Instance& i : a.remove) {
    const Slot* slot = g->Find(i);
    if (slot == nullptr) {
      return Fail(a, fmt::format("{}@{} is not on the GPU",
                                 gpu.profiles[i.profile].name, i.start));
    }
    if (slot->replica) {
      return Fail(
          a, fmt::format("{}@{} still serves {}", gpu.profiles[i.profile].name,
                         i.start, slot->replica->service));
    }
  }
  std::string why;
  if (!mig::IsLegalReconfiguration(gpu, ControllerMigOptions(), g->layout(),
                                   {a.remove, a.add}, nullptr, &why)) {
    return Fail(a, why);
  }
  return Status::Ok();
}

}  // namespace

std::string Describe(const Action& a) {
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kDelete:
      return fmt::format("action {} ({} {} on {})", a.id, KindName(a.kind),
                         a.replica.service, a.at.ToString());
    case ActionKind::kMigrate:
      return fmt::format("action {} (migrate {} from {} to {})", a.id,
                         a.replica.service, a.at.ToString(), a.to.ToString());
    case ActionKind::kRepartition:
      return fmt::format("action {} (repartition GPU {})", a.id,
                         a.at.gpu.ToString());
  }
  return "?";
}

Status StartAction(const Action& a, ClusterState* state) {
  std::string why;
  switch (a.kind) {
    case ActionKind::kCreate: {
      Slot* slot = FindSlot(state, a.at, &why);
      if (slot == nullptr) return Fail(a, why);
      if (slot->replica) {
        return Fail(a, "instance already serves " + slot->replica->service);
      }
      return Status::Ok();
    }
    case ActionKind::kDelete:
    case ActionKind::kMigrate: {
      Slot* from = FindSlot(state, a.at, &why);
      if (from == nullptr) return Fail(a, why);
      if (!from->replica || from->replica->service != a.replica.service) {
        return Fail(a, "no replica of the service there");
      }
      if (a.kind == ActionKind::kMigrate) {
        if (a.to.model != a.at.model) {
          return Fail(a, "a replica migrates only between GPUs of one model");
        }
        Slot* to = FindSlot(state, a.to, &why);
        if (to == nullptr) return Fail(a, "destination: " + why);
        if (to->replica) {
          return Fail(a, "destination already serves " + to->replica->service);
        }
      }
      from->replica.reset();
      return Status::Ok();
    }
    case ActionKind::kRepartition:
      return StartRepartition(a, state);
  }
  return Status::Internal("unknown action kind");
}

Status FinishAction(const Action& a, ClusterState* state) {
  std::string why;
  switch (a.kind) {
    case ActionKind::kCreate:
    case ActionKind::kMigrate: {
      Slot* slot =
          FindSlot(state, a.kind == ActionKind::kCreate ? a.at : a.to, &why);
      if (slot == nullptr) return Fail(a, why);
      slot->replica = a.replica;
      return Status::Ok();
    }
    case ActionKind::kDelete:
      return Status::Ok();
    case ActionKind::kRepartition: {
      GpuState* g = state->FindGpu(a.at.gpu);
      if (g == nullptr) return Fail(a, "GPU is not in the cluster");
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

Status ApplyAction(const Action& action, ClusterState* state) {
  MIGSERVE_RETURN_IF_ERROR(StartAction(action, state));
  return FinishAction(action, state);
}

bool HasTakenEffect(const Action& a, const ClusterState& state) {
  auto serves = [&](const InstanceRef& ref) {
    return state.FindServing(ref.gpu, ref.instance, a.replica.service) !=
           nullptr;
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
