// The checks of flag values, with messages a user reads: "--time-limit:
// must be > 0, got 0" rather than CLI11's "Value 0 not in range 0.000000 to
// 1797693...", and "--flavor: must be one of device-plugin, dra, got x"
// rather than its "{device-plugin->0,dra->1} OR {0,1}". --help shows the
// same words.
#ifndef MIGSERVE_CLI_FLAG_CHECKS_H_
#define MIGSERVE_CLI_FLAG_CHECKS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace migserve::cli {

// A number > 0.
CLI::Validator Positive();
// A number >= 0.
CLI::Validator NonNegative();
// A number in [low, high].
CLI::Validator Between(double low, double high);
// One of `names`, exactly (a check: the value is kept as given).
CLI::Validator OneOf(std::vector<std::string> names);
// One of the names of `choices` (case-insensitive), turned into its value
// (for an enum flag, with ->transform).
template <typename Enum>
CLI::Validator OneOf(std::vector<std::pair<std::string, Enum>> choices);

// Implementation: the names and the text each maps to.
CLI::Validator OneOfMapped(
    std::vector<std::pair<std::string, std::string>> choices, bool ignore_case);

template <typename Enum>
CLI::Validator OneOf(std::vector<std::pair<std::string, Enum>> choices) {
  std::vector<std::pair<std::string, std::string>> mapped;
  for (const auto& [name, value] : choices) {
    mapped.emplace_back(name, std::to_string(static_cast<int>(value)));
  }
  return OneOfMapped(std::move(mapped), true);
}

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_FLAG_CHECKS_H_
