#include "mig/reconfiguration.h"

#include <fmt/format.h>

namespace migserve::mig {

bool IsLegalReconfiguration(const GpuModel& model, const MigOptions& options,
                            const Layout& before, const Reconfiguration& change,
                            Layout* after, std::string* why) {
  std::string reason;
  if (!IsLegal(model, before, options, &reason)) {
    if (why != nullptr) *why = "layout before is illegal: " + reason;
    return false;
  }
  Layout next = before;
  for (const Instance& i : change.remove) {
    if (!next.Remove(i)) {
      if (why != nullptr) {
        *why = fmt::format("{}@{} is not on the GPU",
                           model.profiles.at(i.profile).name, i.start);
      }
      return false;
    }
  }
  for (const Instance& i : change.add) next.Add(i);
  if (!IsLegal(model, next, options, &reason)) {
    if (why != nullptr) *why = "layout after is illegal: " + reason;
    return false;
  }
  if (after != nullptr) *after = std::move(next);
  return true;
}

Reconfiguration Diff(const Layout& before, const Layout& after) {
  Reconfiguration change;
  for (const Instance& i : before.instances()) {
    if (!after.Contains(i)) change.remove.push_back(i);
  }
  for (const Instance& i : after.instances()) {
    if (!before.Contains(i)) change.add.push_back(i);
  }
  return change;
}

}  // namespace migserve::mig
