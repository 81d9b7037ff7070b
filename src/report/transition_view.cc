#include "report/transition_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "util/tolerance.h"

namespace migserve::report {
namespace {

constexpr int kActionLabelPx = 420;  // px for the action's text
constexpr int kTimelinePx = 560;     // px for the time axis

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
    double x = kActionLabelPx + t / end_s * kTimelinePx;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" "
        "y2=\"{1}\"/><text class=\"tick\" x=\"{0:.1f}\" y=\"{2}\" "
        "text-anchor=\"middle\">{3} s</text>\n",
        x, height, y, Num(t));
  }
  return out;
}

}  // namespace

std::string TimelineView(const cluster::TransitionReport& simulation) {
  std::vector<cluster::ReportedAction> actions = simulation.timeline;
  std::stable_sort(
      actions.begin(), actions.end(),
      [](const cluster::ReportedAction& a, const cluster::ReportedAction& b) {
        return a.start_s < b.start_s;
      });
  double end_s = std::max(simulation.makespan_s, 1e-9);
  constexpr int kRow = 14;
  int height = static_cast<int>(actions.size()) * kRow;
  std::string out = fmt::format(
      "<svg class=\"timeline\" width=\"{}\" height=\"{}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n",
      kActionLabelPx + kTimelinePx + 20, height + 20);
  out += Axis(end_s, height + 14, height);
  for (size_t k = 0; k < actions.size(); ++k) {
    const cluster::ReportedAction& a = actions[k];
    std::string service = a.service.value_or("");
    std::string where = a.gpu;
    if (a.to) where += " \u2192 " + *a.to;
    int y = static_cast<int>(k) * kRow;
    out += fmt::format(
        "<g><title>{}: {} s to {} s{}</title>"
        "<text class=\"action-label\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"end\">#{} {} {} {}</text>"
        "<rect class=\"action{}\" data-id=\"{}\" data-kind=\"{}\" "
        "data-service=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
        "height=\"{}\" fill=\"{}\"/></g>\n",
        Escape(a.text), Num(a.start_s), Num(a.end_s), a.ok ? "" : " (failed)",
        kActionLabelPx - 6, y + 11, a.id, Escape(a.kind), Escape(service),
        Escape(where), a.ok ? "" : " failed", a.id, Escape(a.kind),
        Escape(service), kActionLabelPx + a.start_s / end_s * kTimelinePx,
        y + 2, std::max((a.end_s - a.start_s) / end_s * kTimelinePx, 1.0),
        kRow - 4, KindColour(a.kind));
  }
  return out + "</svg>\n";
}

std::string CapacityView(const cluster::TransitionReport& simulation,
                         const Palette& palette) {
  const std::vector<cluster::CapacitySample>& history =
      simulation.capacity_history;
  double end_s = std::max(simulation.makespan_s, 1e-9);
  constexpr int kHeight = 90;
  std::string out;
  for (const cluster::ReportedService& s : simulation.services) {
    const std::string& name = s.name;
    double floor = s.floor, lowest = s.lowest;
    auto at = [&](const cluster::CapacitySample& sample) {
      auto it = sample.capacity.find(name);
      return it == sample.capacity.end() ? 0.0 : it->second;
    };
    double top = std::max(floor, 1e-9);
    for (const cluster::CapacitySample& sample : history) {
      top = std::max(top, at(sample));
    }
    top *= 1.1;
    auto y = [&](double v) { return kHeight - v / top * kHeight + 4; };
    auto x = [&](double t) { return kActionLabelPx + t / end_s * kTimelinePx; };
    std::vector<std::pair<double, double>> steps;
    for (const cluster::CapacitySample& sample : history) {
      steps.emplace_back(sample.time_s, at(sample));
    }
    std::string points = StepPoints(steps, end_s, x, y);
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
        Escape(name), lowest, floor, kActionLabelPx + kTimelinePx + 20,
        kHeight + 8, kActionLabelPx - 6, Escape(name), kActionLabelPx - 6,
        ok ? "ok" : "bad", Num(lowest),
        Num(floor > 0 ? 100 * lowest / floor : 100), Num(floor), kActionLabelPx,
        kActionLabelPx + kTimelinePx, y(floor), y(floor), Num(floor), points,
        palette.Colour(name));
  }
  return out;
}

std::string MovesView(const cluster::TransitionReport& simulation) {
  std::string rows;
  int moves = 0;
  for (const cluster::ReportedAction& a : simulation.timeline) {
    if (a.kind != "migrate" && a.kind != "repartition") continue;
    ++moves;
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        a.id, Escape(a.kind), Escape(a.service.value_or("")), Escape(a.gpu),
        Escape(a.to.value_or(a.kind == "repartition" ? "(new layout)" : "")));
  }
  if (moves == 0)
    return "<p>No replica moved and no GPU was repartitioned.</p>\n";
  return "<table class=\"moves\"><tr><th>action</th><th>kind</th>"
         "<th>service</th><th>GPU</th><th>to</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace migserve::report
