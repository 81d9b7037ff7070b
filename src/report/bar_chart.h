// A horizontal bar chart as inline SVG: one labelled bar per row, with an
// optional reference tick (a requirement, an SLO) on each.
#ifndef MIGSERVE_REPORT_BAR_CHART_H_
#define MIGSERVE_REPORT_BAR_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace migserve::report {

struct Bar {
  std::string label;
  double value = 0;
  std::optional<double> reference;  // drawn as a black tick
  std::string colour = "#4477AA";
  std::string text;   // printed right of the bar
  std::string title;  // tooltip
};

// How a chart's bars share an axis.
enum class BarScale {
  kShared,  // one axis from 0 to the largest value or reference
  // Each bar against its own reference, drawn at two thirds of the width
  // (a bar past 1.5 x its reference is cut at the edge; its text says how
  // far): bars of different units or sizes (a DNN's 7,841 req/s beside an
  // LLM's 6, a 100 ms SLO beside a 64,800 ms one) each stay readable.
  kOfReference,
};

// `css_class` names the chart (<svg class="bar-chart CSS_CLASS">); every bar
// is a <rect class="bar" data-label="...">.
std::string BarChart(const std::vector<Bar>& bars, const std::string& css_class,
                     BarScale scale = BarScale::kShared);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_BAR_CHART_H_
