#include "util/number.h"

#include <fmt/format.h>

#include <cmath>

namespace migserve {

std::string OutOfRange(double value, const NumberRange& range) {
  if (std::isfinite(value) && value >= range.min && value <= range.max) {
    return "";
  }
  return fmt::format("must be from {:g} to {:g}, got {}", range.min, range.max,
                     value);
}

}  // namespace migserve
