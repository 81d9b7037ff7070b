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

// `css_class` names the chart (<svg class="bar-chart CSS_CLASS">); every bar
// is a <rect class="bar" data-label="...">. The scale runs from 0 to the
// largest value or reference.
std::string BarChart(const std::vector<Bar>& bars,
                     const std::string& css_class);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_BAR_CHART_H_
