#include "autoscale/kubernetes/workload_status.h"

#include <fmt/format.h>

#include "kube/object_status.h"

namespace migserve::autoscale {

nlohmann::json WorkloadStatusOf(const WorkloadReport& report,
                                const nlohmann::json& previous,
                                const std::string& now) {
  const std::string followed =
      report.followed > 0 ? fmt::format("generation {} ({} services)",
                                        report.followed, report.services)
                          : "no generation";
  kube::Condition accepted{"Accepted", true, "Followed",
                           "following " + followed};
  if (!report.refused.empty()) {
    accepted = {"Accepted", false, "WorkloadInvalid",
                fmt::format("{}; following {}", report.refused, followed)};
  }
  // An array by name: a one-element brace list is a copy under some
  // compilers, not an array.
  nlohmann::json conditions = nlohmann::json::array();
  conditions.push_back(
      kube::ConditionJson(accepted, report.observed, previous, now));
  if (report.round) {
    conditions.push_back(
        kube::ConditionJson({"Planned", report.round->planned,
                             report.round->reason, report.round->message},
                            report.followed, previous, now));
  }
  nlohmann::json status = {{"observedGeneration", report.observed},
                           {"conditions", conditions}};
  if (report.followed > 0) {
    status["followedGeneration"] = report.followed;
    status["services"] = report.services;
  }
  return status;
}

}  // namespace migserve::autoscale
