#include "cluster/action.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/enum_names.h"

namespace migserve::cluster {

namespace {

constexpr EnumName<ActionKind> kKindNames[] = {
    {ActionKind::kCreate, "create"},
    {ActionKind::kDelete, "delete"},
    {ActionKind::kMigrate, "migrate"},
    {ActionKind::kRepartition, "repartition"}};

}  // namespace

std::string_view KindName(ActionKind kind) { return NameOf(kKindNames, kind); }

std::string InstanceRef::ToString() const {
  return fmt::format("GPU {} {}@{}", gpu.ToString(),
                     model->profiles.at(instance.profile).name, instance.start);
}

double Action::LossAtStart() const {
  return kind == ActionKind::kDelete || kind == ActionKind::kMigrate
             ? replica.credit
             : 0;
}

double Action::GainAtFinish() const {
  return kind == ActionKind::kCreate || kind == ActionKind::kMigrate
             ? replica.credit
             : 0;
}

std::vector<int> Stages(const TransitionPlan& plan) {
  std::map<int, int> stage_of;  // by id
  std::vector<int> stages;
  for (const Action& a : plan.actions) {
    int stage = 0;
    for (int dep : a.after) stage = std::max(stage, stage_of.at(dep) + 1);
    stage_of[a.id] = stage;
    stages.push_back(stage);
  }
  return stages;
}

}  // namespace migserve::cluster
