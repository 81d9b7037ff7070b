// What the report's views share: escaping text for HTML and SVG, and one
// colour per service.
#ifndef MIGSERVE_REPORT_SVG_H_
#define MIGSERVE_REPORT_SVG_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace migserve::report {

// `text` with &, <, >, " and ' escaped, for element text and attributes.
std::string Escape(std::string_view text);

// A number as the report prints it: whole from 1000 up, else up to 4
// significant digits.
std::string Num(double value);

// The points of a polyline that draws a step function: steps[k].second
// from time steps[k].first on, until `end`; `x` and `y` map a time and a
// value to pixels. A step that keeps the value adds no point.
std::string StepPoints(const std::vector<std::pair<double, double>>& steps,
                       double end, const std::function<double(double)>& x,
                       const std::function<double(double)>& y);

// Colours services in the order first given, from a 12-colour qualitative
// palette; past 12 services the colours come again under a pattern
// (diagonal hatching, dots, cross-hatching), so 48 services look distinct
// and more repeat only every 48th. Unknown services are grey.
class Palette {
 public:
  // The patterns a service can wear, for the CSS and SVG that draw them.
  static constexpr int kPatterns = 4;

  explicit Palette(const std::vector<std::string>& services);
  std::string Colour(const std::string& service) const;
  // 0 (plain) for the first 12 services, else 1 to kPatterns - 1.
  int Pattern(const std::string& service) const;
  // "s<k>": the class a service's elements carry and the report's filter
  // anchors ("#only-s<k>") name; "" for unknown services.
  std::string Key(const std::string& service) const;
  // Black or white, whichever reads on Colour(service).
  std::string Ink(const std::string& service) const;
  // The services in palette order.
  const std::vector<std::string>& services() const { return services_; }

 private:
  std::vector<std::string> services_;
  std::map<std::string, size_t> index_;
};

// A hidden SVG defining the patterns Palette::Pattern numbers
// (<pattern id="pattern-1"> ...), once per page.
std::string PatternDefs();

// An SVG rect over x, y, width, height filled with `service`'s pattern, or
// "" when the service has none.
std::string PatternOverlay(const Palette& palette, const std::string& service,
                           int x, int y, int width, int height);

}  // namespace migserve::report

#endif  // MIGSERVE_REPORT_SVG_H_
