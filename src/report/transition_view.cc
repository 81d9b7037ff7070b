#include "report/transition_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "util/tolerance.h"

namespace migserve::report {
namespace {

constexpr int kLabel = 420;  // px for the action's text
constexpr int kPlot = 560;   // px for the time axis

std::string KindColour(const std::string& kind) {
  if (kind == "create") return "#228833";
  if (kind == "delete") return "#CC3311";
  if (kind == "migrate") return "#0077BB";
  return "#EE7733";  // repartition
}

// Tick marks every "nice" number of seconds along the axis.
std::string Axis(double end_s, int y, int height) {
  double step = 1;
  for (double s : {1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0}) {
    step = s;
    if (end_s / s <= 10) break;
  }
  std::string out;
  for (double t = 0; t <= end_s + 1e-9; t += step) {
    double x = kLabel + t / end_s * kPlot;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" "
        "y2=\"{1}\"/><text class=\"tick\" x=\"{0:.1f}\" y=\"{2}\" "
        "text-anchor=\"middle\">{3} s</text>\n",
        x, height, y, Num(t));
  }
  return out;
}

}  // namespace

std::string TimelineView(const nlohmann::json& simulation) {
  std::vector<nlohmann::json> actions(simulation.at("timeline").begin(),
                                      simulation.at("timeline").end());
  std::stable_sort(actions.begin(), actions.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) {
                     return a.at("start_s").get<double>() <
                            b.at("start_s").get<double>();
                   });
  double end_s = std::max(simulation.at("makespan_s").get<double>(), 1e-9);
  constexpr int kRow = 14;
  int height = static_cast<int>(actions.size()) * kRow;
  std::string out = fmt::format(
      "<svg class=\"timeline\" width=\"{}\" height=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n",
      kLabel + kPlot + 20, height + 20);
  out += Axis(end_s, height + 14, height);
  for (size_t k = 0; k < actions.size(); ++k) {
    const nlohmann::json& a = actions[k];
    std::string kind = a.at("kind");
    std::string service = a.value("service", "");
    std::string where = a.at("gpu");
    if (a.contains("to")) where += " \u2192 " + a.at("to").get<std::string>();
    double start = a.at("start_s"), end = a.at("end_s");
    int y = static_cast<int>(k) * kRow;
    out += fmt::format(
        "<g><title>{}: {} s to {} s{}</title>"
        "<text class=\"action-label\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\">#{} {} {} {}</text>"
        "<rect class=\"action{}\" data-id=\"{}\" data-kind=\"{}\" "
        "data-service=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
        "height=\"{}\" fill=\"{}\"/></g>\n",
        Escape(a.at("text").get<std::string>()), Num(start), Num(end),
        a.at("ok").get<bool>() ? "" : " (failed)", kLabel - 6, y + 11,
        a.at("id").get<int>(), Escape(kind), Escape(service), Escape(where),
        a.at("ok").get<bool>() ? "" : " failed", a.at("id").get<int>(),
        Escape(kind), Escape(service), kLabel + start / end_s * kPlot, y + 2,
        std::max((end - start) / end_s * kPlot, 1.0), kRow - 4,
        KindColour(kind));
  }
  return out + "</svg>\n";
}

std::string CapacityView(const nlohmann::json& simulation,
                         const Palette& palette) {
  const nlohmann::json& history = simulation.at("capacity_history");
  double end_s = std::max(simulation.at("makespan_s").get<double>(), 1e-9);
  constexpr int kHeight = 90;
  std::string out;
  for (const nlohmann::json& s : simulation.at("services")) {
    std::string name = s.at("name");
    double floor = s.at("floor"), lowest = s.at("lowest");
    double top = std::max(floor, 1e-9);
    for (const nlohmann::json& sample : history) {
      top = std::max(top, sample.at("capacity").value(name, 0.0));
    }
    top *= 1.1;
    auto y = [&](double v) { return kHeight - v / top * kHeight + 4; };
    auto x = [&](double t) { return kLabel + t / end_s * kPlot; };
    std::string points;
    double last = 0;
    for (size_t k = 0; k < history.size(); ++k) {
      double t = history[k].at("time_s");
      double v = history[k].at("capacity").value(name, 0.0);
      if (k > 0) points += fmt::format("{:.1f},{:.1f} ", x(t), y(last));
      points += fmt::format("{:.1f},{:.1f} ", x(t), y(v));
      last = v;
    }
    points += fmt::format("{:.1f},{:.1f}", x(end_s), y(last));
    bool ok = lowest >= floor * (1 - kRateTolerance);
    out += fmt::format(
        "<svg class=\"capacity\" data-service=\"{}\" data-lowest=\"{}\" "
        "data-floor=\"{}\" width=\"{}\" height=\"{}\" "
        "xmlns=\"http://www.w3.org/2000/svg\">"
        "<text x=\"{}\" y=\"30\" text-anchor=\"end\" class=\"strong\">{}</text>"
        "<text x=\"{}\" y=\"48\" text-anchor=\"end\" class=\"{}\">lowest {} "
        "req/s = {}% of floor {}</text>"
        "<line class=\"floor\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" "
        "y2=\"{:.1f}\"><title>floor min(before, after) = {} req/s</title>"
        "</line>"
        "<polyline class=\"capacity-line\" points=\"{}\" stroke=\"{}\"/>"
        "</svg>\n",
        Escape(name), lowest, floor, kLabel + kPlot + 20, kHeight + 8,
        kLabel - 6, Escape(name), kLabel - 6, ok ? "ok" : "bad", Num(lowest),
        Num(floor > 0 ? 100 * lowest / floor : 100), Num(floor), kLabel,
        kLabel + kPlot, y(floor), y(floor), Num(floor), points,
        palette.Colour(name));
  }
  return out;
}

std::string MovesView(const nlohmann::json& simulation) {
  std::string rows;
  int moves = 0;
  for (const nlohmann::json& a : simulation.at("timeline")) {
    std::string kind = a.at("kind");
    if (kind != "migrate" && kind != "repartition") continue;
    ++moves;
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        a.at("id").get<int>(), Escape(kind), Escape(a.value("service", "")),
        Escape(a.at("gpu").get<std::string>()),
        Escape(a.value(
            "to", std::string(kind == "repartition" ? "(new layout)" : ""))));
  }
  if (moves == 0)
    return "<p>No replica moved and no GPU was repartitioned.</p>\n";
  return "<table class=\"moves\"><tr><th>action</th><th>kind</th>"
         "<th>service</th><th>GPU</th><th>to</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace migserve::report
