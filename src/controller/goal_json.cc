#include "controller/goal_json.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"
#include "deployment/deployment_json.h"

namespace migserve::controller {
namespace {

Status ReadRates(const nlohmann::json& object, const char* key,
                 const std::string& source,
                 std::map<std::string, double>* out) {
  const nlohmann::json* rates =
      object.contains(key) ? &object.at(key) : nullptr;
  if (rates == nullptr || !rates->is_object()) {
    return Status::InvalidArgument(
        fmt::format("{}: {}: expected an object", source, key));
  }
  for (const auto& [service, rate] : rates->items()) {
    if (!rate.is_number() || !std::isfinite(rate.get<double>()) ||
        rate.get<double>() < 0) {
      return Status::InvalidArgument(
          fmt::format("{}: {}.{}: expected a rate >= 0", source, key, service));
    }
    (*out)[service] = rate.get<double>();
  }
  return Status::Ok();
}

}  // namespace

std::string FormatGoal(const TransitionGoal& goal) {
  nlohmann::json j = {{"required_before", goal.required_before},
                      {"required_after", goal.required_after},
                      {"target_gpus", goal.target_gpus}};
  if (goal.survive) j["survive"] = deployment::SurviveJson(*goal.survive);
  return j.dump();
}

StatusOr<TransitionGoal> ParseGoal(const std::string& text,
                                   const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json j,
                            ParseJsonObject(text, source, "goal"));
  TransitionGoal goal;
  MIGSERVE_RETURN_IF_ERROR(
      ReadRates(j, "required_before", source, &goal.required_before));
  MIGSERVE_RETURN_IF_ERROR(
      ReadRates(j, "required_after", source, &goal.required_after));
  JsonFields fields(j, source, "");
  MIGSERVE_RETURN_IF_ERROR(fields.Get("target_gpus", true, &goal.target_gpus));
  if (goal.target_gpus < 0) {
    return fields.Error("target_gpus", "expected >= 0");
  }
  if (fields.Has("survive")) {
    MIGSERVE_ASSIGN_OR_RETURN(goal.survive,
                              deployment::ParseSurvive(j["survive"], source));
  }
  return goal;
}

}  // namespace migserve::controller
