#include "cluster/action.h"

#include <fmt/format.h>

namespace migserve::cluster {

std::string_view KindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kCreate:
      return "create";
    case ActionKind::kDelete:
      return "delete";
    case ActionKind::kMigrate:
      return "migrate";
    case ActionKind::kRepartition:
      return "repartition";
  }
  return "?";
}

std::string InstanceRef::ToString() const {
  return fmt::format("GPU {} {}@{}", gpu.ToString(),
                     model->profiles.at(instance.profile).name, instance.start);
}

double Action::LossAtStart() const {
  return kind == ActionKind::kDelete || kind == ActionKind::kMigrate
             ? replica.throughput
             : 0;
}

double Action::GainAtFinish() const {
  return kind == ActionKind::kCreate || kind == ActionKind::kMigrate
             ? replica.throughput
             : 0;
}

}  // namespace migserve::cluster
