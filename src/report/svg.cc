#include "report/svg.h"

#include <fmt/format.h>

#include <cmath>

namespace migserve::report {

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double value) {
  if (std::abs(value) >= 1000) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

std::string StepPoints(const std::vector<std::pair<double, double>>& steps,
                       double end, const std::function<double(double)>& x,
                       const std::function<double(double)>& y) {
  std::string points;
  double last = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const auto [t, v] = steps[k];
    if (k > 0 && v == last) continue;
    if (k > 0) points += fmt::format("{:.1f},{:.1f} ", x(t), y(last));
    points += fmt::format("{:.1f},{:.1f} ", x(t), y(v));
    last = v;
  }
  return points + fmt::format("{:.1f},{:.1f}", x(end), y(last));
}

Palette::Palette(const std::vector<std::string>& services) {
  for (const std::string& s : services) {
    if (index_.emplace(s, services_.size()).second) services_.push_back(s);
  }
}

std::string Palette::Colour(const std::string& service) const {
  // Paul Tol's "muted" and "light" qualitative schemes.
  static constexpr const char* kColours[] = {
      "#88CCEE", "#CC6677", "#DDCC77", "#117733", "#332288", "#AA4499",
      "#44AA99", "#999933", "#882255", "#EE8866", "#77AADD", "#BBCC33"};
  auto it = index_.find(service);
  if (it == index_.end()) return "#BBBBBB";
  return kColours[it->second % 12];
}

int Palette::Pattern(const std::string& service) const {
  auto it = index_.find(service);
  return it == index_.end() ? 0 : static_cast<int>(it->second / 12 % kPatterns);
}

std::string Palette::Key(const std::string& service) const {
  auto it = index_.find(service);
  return it == index_.end() ? "" : fmt::format("s{}", it->second);
}

std::string PatternDefs() {
  return "<svg width=\"0\" height=\"0\" style=\"position:absolute\" "
         "aria-hidden=\"true\" xmlns=\"http://www.w3.org/2000/svg\"><defs>"
         "<pattern id=\"pattern-1\" width=\"6\" height=\"6\" "
         "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"2\" height=\"6\" fill=\"#000\" "
         "fill-opacity=\"0.35\"/></pattern>"
         "<pattern id=\"pattern-2\" width=\"6\" height=\"6\" "
         "patternUnits=\"userSpaceOnUse\"><circle cx=\"3\" cy=\"3\" "
         "r=\"1.3\" fill=\"#000\" fill-opacity=\"0.45\"/></pattern>"
         "<pattern id=\"pattern-3\" width=\"6\" height=\"6\" "
         "patternUnits=\"userSpaceOnUse\"><path d=\"M0 3H6M3 0V6\" "
         "stroke=\"#000\" stroke-opacity=\"0.35\" stroke-width=\"1.2\"/>"
         "</pattern></defs></svg>\n";
}

std::string PatternOverlay(const Palette& palette, const std::string& service,
                           int x, int y, int width, int height) {
  int pattern = palette.Pattern(service);
  if (pattern == 0) return "";
  return fmt::format(
      "<rect class=\"pattern\" x=\"{}\" y=\"{}\" width=\"{}\" "
      "height=\"{}\" fill=\"url(#pattern-{})\"/>",
      x, y, width, height, pattern);
}

}  // namespace migserve::report

namespace migserve::report {

std::string Palette::Ink(const std::string& service) const {
  std::string colour = Colour(service);
  auto channel = [&](int at) {
    return std::stoi(colour.substr(at, 2), nullptr, 16) / 255.0;
  };
  double luminance =
      0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance < 0.45 ? "#FFFFFF" : "#000000";
}

}  // namespace migserve::report
