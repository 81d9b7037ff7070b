// Why a transition keeps no survive promise its target makes: the planner
// found no room for the copies a loss would need, so its plans keep the
// floors alone (controller/planner.h, PlanSurvivingIfPossible). One type
// for what the planner says, the controller's stats, `simulate`'s report
// and the replay's events carry, and one sentence for every command that
// says it.
#ifndef MIGSERVE_CLUSTER_SURVIVE_DROPPED_H_
#define MIGSERVE_CLUSTER_SURVIVE_DROPPED_H_

#include <string>

namespace migserve::cluster {

struct SurviveDropped {
  std::string why;  // empty: kept, or none asked

  bool dropped() const { return !why.empty(); }
  std::string Sentence() const {
    return "the target's survive is not kept during the transition: " + why;
  }
  bool operator==(const SurviveDropped&) const = default;
};

}  // namespace migserve::cluster

#endif  // MIGSERVE_CLUSTER_SURVIVE_DROPPED_H_
