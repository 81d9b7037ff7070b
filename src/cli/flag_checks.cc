#include "cli/flag_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "boundary/csv.h"

namespace migserve::cli {
namespace {

std::optional<double> Number(const std::string& text) {
  double value = 0;
  if (!ParseDouble(text, &value)) return std::nullopt;
  return value;
}

// A number that passes `ok`, described as `what` ("> 0").
CLI::Validator NumberWhere(std::function<bool(double)> ok, std::string what) {
  return CLI::Validator(
      [ok, what](std::string& text) -> std::string {
        std::optional<double> value = Number(text);
        if (!value)
          return fmt::format("must be a finite number {}, got {}", what, text);
        if (!ok(*value)) return fmt::format("must be {}, got {}", what, text);
        return "";
      },
      what);
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

CLI::Validator Positive() {
  return NumberWhere([](double v) { return v > 0; }, "> 0");
}

CLI::Validator NonNegative() {
  return NumberWhere([](double v) { return v >= 0; }, ">= 0");
}

CLI::Validator Between(double low, double high) {
  return NumberWhere([=](double v) { return v >= low && v <= high; },
                     fmt::format("in [{:g}, {:g}]", low, high));
}

CLI::Validator OneOf(std::vector<std::string> names) {
  std::vector<std::pair<std::string, std::string>> same;
  for (const std::string& name : names) same.emplace_back(name, name);
  return OneOfMapped(std::move(same), false);
}

CLI::Validator OneOfMapped(
    std::vector<std::pair<std::string, std::string>> choices,
    bool ignore_case) {
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) names.push_back(name);
  std::string list = fmt::format("{}", fmt::join(names, ", "));
  return CLI::Validator(
      [choices, list, ignore_case](std::string& text) -> std::string {
        for (const auto& [name, value] : choices) {
          if (ignore_case ? Lower(name) == Lower(text) : name == text) {
            text = value;
            return "";
          }
        }
        return fmt::format("must be one of {}, got {}", list, text);
      },
      "{" + fmt::format("{}", fmt::join(names, ",")) + "}");
}

}  // namespace migserve::cli
