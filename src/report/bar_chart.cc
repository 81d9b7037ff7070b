#include "report/bar_chart.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/svg.h"

namespace migserve::report {

std::string BarChart(const std::vector<Bar>& bars, const std::string& css_class,
                     BarScale scale) {
  constexpr int kLabel = 200, kWidth = 420, kRow = 22, kText = 260;
  // Against a reference, the axis runs to 1.5 x it.
  constexpr double kPastReference = 1.5;
  double top = 0;
  for (const Bar& b : bars) {
    top = std::max({top, b.value, b.reference.value_or(0)});
  }
  if (top <= 0) top = 1;
  const Bar* bar = nullptr;  // the bar being drawn
  auto x = [&](double v) {
    double end = top;
    if (scale == BarScale::kOfReference && bar->reference.value_or(0) > 0) {
      end = kPastReference * *bar->reference;
    }
    return kLabel + std::min(v / end, 1.0) * kWidth;
  };
  std::string out = fmt::format(
      "<svg class=\"bar-chart {}\" width=\"{}\" height=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n",
      css_class, kLabel + kWidth + kText, bars.size() * kRow + 4);
  for (size_t k = 0; k < bars.size(); ++k) {
    const Bar& b = bars[k];
    bar = &b;
    int y = static_cast<int>(k) * kRow;
    out += fmt::format(
        "<g transform=\"translate(0,{})\"><title>{}</title>"
        "<text x=\"{}\" y=\"15\" text-anchor=\"end\">{}</text>"
        "<rect class=\"bar\" data-label=\"{}\" x=\"{}\" y=\"3\" "
        "width=\"{:.1f}\" "
        "height=\"{}\" fill=\"{}\"/>",
        y, Escape(b.title.empty() ? b.label : b.title), kLabel - 6,
        Escape(b.label), Escape(b.label), kLabel, x(b.value) - kLabel, kRow - 6,
        b.colour);
    if (b.reference) {
      out += fmt::format(
          "<line class=\"reference\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"0\" "
          "y2=\"{}\"/>",
          x(*b.reference), x(*b.reference), kRow);
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"15\">{}</text></g>\n",
                       std::max(x(b.value), x(b.reference.value_or(0))) + 6,
                       Escape(b.text));
  }
  return out + "</svg>\n";
}

}  // namespace migserve::report
