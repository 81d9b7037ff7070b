// Numbers from outside as values that can only be made by checking them
// (docs/design.md, "The boundary"): a request rate and a span of time,
// each finite and within the range of what it measures (boundary/number.h).
// What writes them into a configuration (nginx.conf's timeouts) or judges
// traffic by them (the autoscaler's observed rates) takes these.
#ifndef MIGSERVE_BOUNDARY_QUANTITY_H_
#define MIGSERVE_BOUNDARY_QUANTITY_H_

#include <compare>
#include <string>

#include "boundary/number.h"
#include "util/status_or.h"

namespace migserve {

// A value of Rule::kRange, in Rule::kUnit; no default, no unchecked one.
template <typename Rule>
class CheckedNumber {
 public:
  static constexpr NumberRange kRange = Rule::kRange;

  // Returns the value, or InvalidArgument "<what> must be from ... got x".
  static StatusOr<CheckedNumber> Of(double value) {
    std::string problem = OutOfRange(value, kRange);
    if (!problem.empty()) {
      return Status::InvalidArgument(std::string(Rule::kWhat) + " " + problem);
    }
    return CheckedNumber(value);
  }
  // The least value of the range (none: 0 for a rate and a duration), the
  // one a value may start from unchecked.
  static constexpr CheckedNumber Least() { return CheckedNumber(kRange.min); }

  double value() const { return value_; }
  auto operator<=>(const CheckedNumber&) const = default;

 private:
  explicit constexpr CheckedNumber(double value) : value_(value) {}
  double value_;
};

struct RateRule {
  static constexpr char kWhat[] = "rate (req/s)";
  // Traffic as observed or required: none, up to the most a workload may
  // ask (kRateRange.max).
  static constexpr NumberRange kRange{0, kRateRange.max};
};
struct DurationRule {
  static constexpr char kWhat[] = "duration (s)";
  // From none to some 31 years: past it a time is a typo or an attack.
  static constexpr NumberRange kRange{0, 1e9};
};

// Requests per second.
using Rate = CheckedNumber<RateRule>;
// Seconds.
using Duration = CheckedNumber<DurationRule>;

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_QUANTITY_H_
