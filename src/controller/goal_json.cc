#include "controller/goal_json.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"
#include "boundary/quantity.h"
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
    StatusOr<Rate> checked =
        rate.is_number() ? Rate::Of(rate.get<double>())
                         : Status::InvalidArgument("expected a rate, a number");
    if (!checked.ok()) {
      return Status::InvalidArgument(fmt::format(
          "{}: {}.{}: {}", source, key, service, checked.status().message()));
    }
    (*out)[service] = checked->value();
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
