#include "boundary/number.h"

#include <fmt/format.h>

#include <cmath>

namespace migserve {

bool InRange(double value, const NumberRange& range) {
  return std::isfinite(value) && value >= range.min && value <= range.max;
}

std::string RangeRule(const NumberRange& range) {
  return fmt::format("must be from {:g} to {:g}", range.min, range.max);
}

std::string OutOfRange(double value, const NumberRange& range) {
  if (InRange(value, range)) return "";
  return fmt::format("{}, got {}", RangeRule(range), value);
}

}  // namespace migserve
