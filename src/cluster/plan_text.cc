#include "cluster/plan_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "cluster/apply.h"

namespace migserve::cluster {

std::string FormatPlanText(const TransitionPlan& plan) {
  std::vector<int> stages = Stages(plan);
  int count = 0;
  for (int s : stages) count = std::max(count, s + 1);
  std::string out =
      fmt::format("{} actions in {} stages\n", plan.actions.size(), count);
  for (int stage = 0; stage < count; ++stage) {
    int size =
        static_cast<int>(std::count(stages.begin(), stages.end(), stage));
    out += fmt::format("stage {} of {}: {} action{}\n", stage + 1, count, size,
                       size == 1 ? "" : "s");
    for (size_t k = 0; k < plan.actions.size(); ++k) {
      if (stages[k] != stage) continue;
      const Action& a = plan.actions[k];
      out += "  " + Describe(a);
      if (!a.after.empty()) {
        out += fmt::format(", after {}", fmt::join(a.after, ", "));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace migserve::cluster
