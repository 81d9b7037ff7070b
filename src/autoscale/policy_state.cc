#include "autoscale/policy_state.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace migserve::autoscale {

std::string FormatPolicyState(const PolicyState& state) {
  nlohmann::json j = {{"low_since", state.low_since},
                      {"margins", state.margins}};
  return j.dump(2) + "\n";
}

StatusOr<PolicyState> ParsePolicyState(const std::string& text,
                                       const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(
        fmt::format("{}: not a JSON object of the policy's state", source));
  }
  PolicyState state;
  auto read = [&](const char* field, std::map<std::string, double>* out,
                  bool margin) -> Status {
    auto it = j.find(field);
    if (it == j.end()) return Status::Ok();
    if (!it->is_object()) {
      return Status::InvalidArgument(
          fmt::format("{}: {}: expected an object by service", source, field));
    }
    for (const auto& [service, value] : it->items()) {
      double v = value.is_number() ? value.get<double>() : std::nan("");
      if (!std::isfinite(v) || (margin && !(v > 0 && v <= 1))) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}.{}: {} is not {}", source, field, service, value.dump(),
            margin ? "a share in (0, 1]" : "a time (Unix seconds)"));
      }
      (*out)[service] = v;
    }
    return Status::Ok();
  };
  MIGSERVE_RETURN_IF_ERROR(read("low_since", &state.low_since, false));
  MIGSERVE_RETURN_IF_ERROR(read("margins", &state.margins, true));
  return state;
}

}  // namespace migserve::autoscale
