#include "report/replay_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace migserve::report {
namespace {

constexpr int kServiceLabelPx = 220;  // px for the service's name
constexpr int kTimeAxisPx = 760;      // px for the time axis

// Maps a moment of the day to pixels.
struct TimeAxis {
  double start_s;
  double span_s;
  double operator()(double t) const {
    return kServiceLabelPx + (t - start_s) / span_s * kTimeAxisPx;
  }
};

TimeAxis AxisOf(const autoscale::ReplayReport& day) {
  return {day.start_s, std::max(day.end_s - day.start_s, 1e-9)};
}

// Grid lines and labels at every "nice" number of hours (or minutes, for
// a short day), from the day's start.
std::string Ticks(const autoscale::ReplayReport& day, int height) {
  TimeAxis x = AxisOf(day);
  double step = 60;
  for (double s : {60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0,
                   43200.0, 86400.0}) {
    step = s;
    if (x.span_s / s <= 12) break;
  }
  std::string out;
  for (double t = 0; t <= x.span_s + 1e-9; t += step) {
    std::string label = step >= 3600 ? fmt::format("{} h", Num(t / 3600))
                                     : fmt::format("{} min", Num(t / 60));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" "
        "y2=\"{1}\"/><text class=\"tick\" x=\"{0:.1f}\" y=\"{2}\" "
        "text-anchor=\"middle\">{3}</text>\n",
        x(day.start_s + t), height, height + 14, label);
  }
  return out;
}

// Horizontal grid lines with their values at every "nice" number of GPUs
// (1, 2 or 5 times a power of ten) from 0 to `top`, right-aligned left of
// the plot; `y` maps a value to pixels.
std::string ValueTicks(double top, const std::function<double(double)>& y) {
  double step = 1;
  for (double power = 1; top / step > 5; power *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      step = m * power;
      if (top / step <= 5) break;
    }
  }
  std::string out;
  for (double v = 0; v <= top + 1e-9; v += step) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" "
        "y2=\"{2:.1f}\"/><text class=\"tick y-tick\" x=\"{3}\" "
        "y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kServiceLabelPx, kServiceLabelPx + kTimeAxisPx, y(v),
        kServiceLabelPx - 4, y(v) + 4, Num(v));
  }
  return out;
}

// A thin vertical line at each move of the policy, from y 0 to `height`.
std::string MoveMarks(const autoscale::ReplayReport& day, int height) {
  TimeAxis x = AxisOf(day);
  std::string out;
  for (const autoscale::ReplayEvent& e : day.events) {
    out += fmt::format(
        "<line class=\"move-mark {}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"0\" "
        "y2=\"{}\"><title>{}</title></line>\n",
        autoscale::MoveName(e.move), x(e.time_s), x(e.time_s), height,
        Escape(e.reason));
  }
  return out;
}

}  // namespace

std::string ReplayRunsTable(const autoscale::ReplayReport& day) {
  std::string rows;
  for (const auto& [name, run] : {std::pair{"policy", &day.policy},
                                  {"static peak", &day.static_peak},
                                  {"oracle (moves for free)", &day.oracle}}) {
    rows += fmt::format(
        "<tr data-run=\"{}\" data-gpu-hours=\"{}\"><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n",
        name, run->gpu_hours, name, Num(run->gpu_hours), run->peak_gpus,
        run->transitions, run->short_minutes > 0 ? "bad" : "",
        Num(run->short_minutes));
  }
  double saved =
      day.static_peak.gpu_hours > 0
          ? 100 * (1 - day.policy.gpu_hours / day.static_peak.gpu_hours)
          : 0;
  std::string budget =
      day.max_gpus > 0
          ? fmt::format(
                " Under a budget of {} GPUs (its peak {}, transitions "
                "included), {} moves were not made.",
                day.max_gpus, day.policy.peak_gpus, day.over_budget)
          : "";
  return fmt::format(
      "<p id=\"replay\" data-saved=\"{:.2f}\" data-max-gpus=\"{}\" "
      "data-over-budget=\"{}\">The policy used {}% fewer GPU-hours than "
      "static provisioning for the peak, with {} transitions.{}</p>\n"
      "<table class=\"replay-runs\"><tr><th>provisioning</th><th>GPU-hours"
      "</th><th>peak GPUs</th><th>transitions</th><th>minutes short</th>"
      "</tr>\n{}</table>\n",
      saved, day.max_gpus, day.over_budget, Num(saved), day.policy.transitions,
      budget, rows);
}

std::string ReplayGpusView(const autoscale::ReplayReport& day) {
  constexpr int kHeight = 160;
  TimeAxis x = AxisOf(day);
  double top = std::max(day.static_peak.peak_gpus, 1);
  std::vector<std::pair<double, double>> steps;
  for (const autoscale::ReplaySample& s : day.samples) {
    top = std::max<double>(top, s.gpus);
    steps.emplace_back(s.time_s, s.gpus);
  }
  top *= 1.1;
  auto y = [&](double v) { return kHeight - v / top * kHeight + 4; };
  std::string moves;
  for (const autoscale::ReplayEvent& e : day.events) {
    moves += fmt::format(
        "<line class=\"move {}\" data-time=\"{}\" data-gpus-before=\"{}\" "
        "data-gpus-after=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
        "y2=\"{:.1f}\"><title>{} s: {} ({} -> {} GPUs, {} pod starts, {} s)"
        "{}</title></line>\n",
        autoscale::MoveName(e.move), e.time_s, e.gpus_before, e.gpus_after,
        x(e.time_s), x(e.time_s), y(e.gpus_before), y(e.gpus_after),
        Num(e.time_s), Escape(e.reason), e.gpus_before, e.gpus_after,
        e.pod_starts, Num(e.makespan_s),
        e.problem.empty() ? "" : ": " + Escape(e.problem));
  }
  double fixed = day.static_peak.peak_gpus;
  return fmt::format(
      "<svg class=\"replay-gpus\" data-peak=\"{}\" data-static=\"{}\" "
      "width=\"{}\" height=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      "{}{}<text x=\"{}\" y=\"30\" text-anchor=\"end\" class=\"strong\">"
      "GPUs in use</text><text x=\"{}\" y=\"48\" text-anchor=\"end\" "
      "class=\"muted\">peak {}, static {}</text>\n"
      "<line class=\"static-peak\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" "
      "y2=\"{:.1f}\"><title>static provisioning for the peak: {} GPUs"
      "</title></line>\n<polyline class=\"gpus-line\" points=\"{}\"/>\n{}"
      "</svg>\n",
      day.policy.peak_gpus, day.static_peak.peak_gpus,
      kServiceLabelPx + kTimeAxisPx + 20, kHeight + 24, Ticks(day, kHeight + 4),
      ValueTicks(top, y), kServiceLabelPx - 40, kServiceLabelPx - 40,
      day.policy.peak_gpus, day.static_peak.peak_gpus, kServiceLabelPx,
      kServiceLabelPx + kTimeAxisPx, y(fixed), y(fixed),
      day.static_peak.peak_gpus, StepPoints(steps, day.end_s, x, y), moves);
}

std::string ReplayServicesView(const autoscale::ReplayReport& day,
                               const ObservedRates* rates,
                               const Palette& palette) {
  constexpr int kHeight = 70;
  TimeAxis x = AxisOf(day);
  std::string out;
  for (size_t s = 0; s < day.services.size(); ++s) {
    const std::string& name = day.services[s];
    std::vector<std::pair<double, double>> capacity;
    for (const autoscale::ReplaySample& sample : day.samples) {
      capacity.emplace_back(sample.time_s, sample.capacity[s]);
    }
    std::vector<std::pair<double, double>> rate;
    if (rates) {
      auto at = std::find(rates->services.begin(), rates->services.end(), name);
      size_t r = at - rates->services.begin();
      for (size_t k = 0;
           at != rates->services.end() && k < rates->times_s.size(); ++k) {
        rate.emplace_back(rates->times_s[k], rates->rates[k][r]);
      }
    }
    double top = 1e-9;
    for (const auto& [t, v] : capacity) top = std::max(top, v);
    for (const auto& [t, v] : rate) top = std::max(top, v);
    top *= 1.1;
    auto y = [&](double v) { return kHeight - v / top * kHeight + 4; };
    auto short_at = day.policy.short_minutes_by_service.find(name);
    double minutes = short_at == day.policy.short_minutes_by_service.end()
                         ? 0
                         : short_at->second;
    std::string rate_line;
    if (!rate.empty()) {
      rate_line = fmt::format("<polyline class=\"rate-line\" points=\"{}\"/>",
                              StepPoints(rate, day.end_s, x, y));
    }
    out += fmt::format(
        "<svg class=\"replay-service\" data-service=\"{}\" "
        "data-short-minutes=\"{}\" width=\"{}\" height=\"{}\" "
        "xmlns=\"http://www.w3.org/2000/svg\">{}"
        "<text x=\"{}\" y=\"30\" text-anchor=\"end\" class=\"strong\">{}"
        "</text><text x=\"{}\" y=\"48\" text-anchor=\"end\" class=\"{}\">"
        "{} min short</text><polyline class=\"capacity-line\" points=\"{}\" "
        "stroke=\"{}\"/>{}</svg>\n",
        Escape(name), minutes, kServiceLabelPx + kTimeAxisPx + 20, kHeight + 8,
        MoveMarks(day, kHeight + 8), kServiceLabelPx - 6, Escape(name),
        kServiceLabelPx - 6, minutes > 0 ? "bad" : "ok", Num(minutes),
        StepPoints(capacity, day.end_s, x, y), palette.Colour(name), rate_line);
  }
  return out;
}

}  // namespace migserve::report
