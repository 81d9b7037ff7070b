#include "autoscale/policy_state.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"
#include "boundary/number.h"

namespace migserve::autoscale {
namespace {

// When a service may have been low since: a time of this century (a
// cool-down since 1e12 never ends, one since -1e300 ends at once).
constexpr NumberRange kStateTimeRange{946684800, 4102444800};

}  // namespace

std::string FormatPolicyState(const PolicyState& state) {
  nlohmann::json j = {{"low_since", state.low_since},
                      {"margins", state.margins}};
  return j.dump(2) + "\n";
}

StatusOr<PolicyState> ParsePolicyState(const std::string& text,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(
      nlohmann::json j, ParseJsonObject(text, source, "the policy's state"));
  for (const auto& [key, value] : j.items()) {
    if (key != "low_since" && key != "margins") {
      return Status::InvalidArgument(fmt::format(
          "{}: {}: unknown field (expected low_since, margins)", source, key));
    }
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
      if (margin ? !(v > 0 && v <= 1) : !InRange(v, kStateTimeRange)) {
        return Status::InvalidArgument(fmt::format(
            "{}: {}.{}: {} is not {}", source, field, service, value.dump(),
            margin ? std::string("a share in (0, 1]")
                   : fmt::format("a time from {:.0f} to {:.0f} (Unix "
                                 "seconds, the years 2000 to 2100)",
                                 kStateTimeRange.min, kStateTimeRange.max)));
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
