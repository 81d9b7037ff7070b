#include "report/html_report.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "report/bar_chart.h"
#include "report/deployment_view.h"
#include "report/gpu_groups.h"
#include "report/replay_view.h"
#include "report/svg.h"
#include "report/transition_view.h"

namespace migserve::report {
namespace {

constexpr const char* kStyle = R"(
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px;
  border-bottom: 1px solid #ccc; } h3 { font-size: 14px; margin: 12px 0 4px; }
.muted { color: #777; font-weight: normal; }
svg text { font: 11px system-ui, sans-serif; }
.gpu-label, .strong { font-weight: bold; }
.gpu-model, .tick { fill: #666; }
.gpu-frame { fill: none; stroke: #999; }
.idle rect { stroke: #AAA; stroke-dasharray: 3 2; }
.idle-gpu .gpu-frame { fill: #FAFAFA; stroke-dasharray: 4 3; }
.reference { stroke: #000; stroke-width: 2; }
.grid { stroke: #EEE; }
.floor { stroke: #CC3311; stroke-dasharray: 6 3; }
.capacity-line { fill: none; stroke-width: 2; }
.gpus-line { fill: none; stroke: #4477AA; stroke-width: 2; }
.rate-line { fill: none; stroke: #222; stroke-width: 1; stroke-dasharray: 4 2; }
.static-peak { stroke: #777; stroke-dasharray: 6 3; }
.move, .move-mark { stroke-width: 1; } .up { stroke: #CC3311; }
.down { stroke: #228833; } .move-mark { stroke-opacity: 0.5; }
.ok { fill: #228833; } .bad { fill: #CC3311; font-weight: bold; }
table { border-collapse: collapse; } td, th { padding: 2px 10px;
  border-bottom: 1px solid #EEE; text-align: left; }
.fleet-map { display: flex; flex-wrap: wrap; gap: 6px; }
.mini-node { margin: 0; font-size: 10px; color: #555; }
.mini-node .gpu-frame { fill: #FFF; stroke: #CCC; stroke-width: 0.5; }
.legend span { display: inline-block; margin: 2px 10px 2px 0; }
.swatch { width: 12px; height: 12px; vertical-align: middle;
  margin-right: 4px; border-radius: 2px; }
.swatch.p1 { background-image: repeating-linear-gradient(45deg,
  rgba(0,0,0,.35) 0 2px, transparent 2px 4px); }
.swatch.p2 { background-image: radial-gradient(rgba(0,0,0,.45) 1.3px,
  transparent 1.5px); background-size: 4px 4px; }
.swatch.p3 { background-image: linear-gradient(rgba(0,0,0,.35) 1px,
  transparent 1px), linear-gradient(90deg, rgba(0,0,0,.35) 1px,
  transparent 1px); background-size: 4px 4px; }
.legend a { color: inherit; text-decoration: none; }
.pattern { pointer-events: none; }
.anchor:target ~ main .instance { opacity: 0.12; }
)";

// One link per service: following it (or opening the report at
// #only-s<k>) fades every instance of the other services.
std::string Legend(const Palette& palette) {
  std::string out =
      "<p class=\"legend\"><span class=\"muted\">Select a service to show "
      "only its instances (<a href=\"#\">all</a>):</span> ";
  for (const std::string& s : palette.services()) {
    int pattern = palette.Pattern(s);
    out += fmt::format(
        "<a class=\"legend-item\" href=\"#only-{}\" data-service=\"{}\" "
        "data-colour=\"{}\" data-pattern=\"{}\"><span class=\"swatch{}\" "
        "style=\"background-color:{}\"></span>{}</a> ",
        palette.Key(s), Escape(s), palette.Colour(s), pattern,
        pattern > 0 ? fmt::format(" p{}", pattern) : "", palette.Colour(s),
        Escape(s));
  }
  return out +
         "<span><span class=\"swatch\" style=\"background:#F4F4F4;"
         "border:1px dashed #AAA\"></span>idle</span></p>\n";
}

// The targets of the legend's links, before <main> so that CSS can reach
// what follows them.
std::string FilterAnchors(const Palette& palette) {
  std::string out;
  for (const std::string& s : palette.services()) {
    out +=
        fmt::format("<i class=\"anchor\" id=\"only-{}\"></i>", palette.Key(s));
  }
  return out + "\n";
}

// The rules that keep the targeted service's instances when the others fade.
std::string FilterStyle(const Palette& palette) {
  std::string out;
  for (const std::string& s : palette.services()) {
    out +=
        fmt::format("#only-{0}:target ~ main .instance.{0} {{ opacity: 1; }}\n",
                    palette.Key(s));
  }
  return out;
}

// GPUs serving before but not after, and the other way round.
std::string Freed(const deployment::Deployment& before,
                  const deployment::Deployment& after) {
  std::set<std::string> was, is;
  for (const auto& g : before.gpus) {
    if (g.Serving()) was.insert(GpuName(g));
  }
  for (const auto& g : after.gpus) {
    if (g.Serving()) is.insert(GpuName(g));
  }
  std::vector<std::string> freed, taken;
  for (const std::string& g : was) {
    if (!is.contains(g)) freed.push_back(g);
  }
  for (const std::string& g : is) {
    if (!was.contains(g)) taken.push_back(g);
  }
  return fmt::format(
      "<p id=\"freed\" data-freed=\"{}\" data-taken=\"{}\">Serving GPUs: {} "
      "before, {} after. <b>Freed ({})</b>: {}. <b>Newly used ({})</b>: "
      "{}.</p>\n",
      freed.size(), taken.size(), was.size(), is.size(), freed.size(),
      freed.empty() ? "none"
                    : Escape(fmt::format("{}", fmt::join(freed, ", "))),
      taken.size(),
      taken.empty() ? "none"
                    : Escape(fmt::format("{}", fmt::join(taken, ", "))));
}

std::string SupplyChart(const std::vector<ServiceSupply>& supply,
                        const Palette& palette) {
  std::vector<Bar> bars;
  for (const ServiceSupply& s : supply) {
    Bar b;
    b.label = s.name;
    b.value = s.provided;
    b.reference = s.required;
    b.colour = palette.Colour(s.name);
    b.text =
        fmt::format("{} of {} req/s ({}%)", Num(s.provided), Num(s.required),
                    Num(s.required > 0 ? 100 * s.provided / s.required : 100));
    bars.push_back(std::move(b));
  }
  return BarChart(bars, "satisfaction", BarScale::kOfReference);
}

std::string CompareChart(const std::vector<ComparedRow>& compare) {
  std::vector<Bar> bars;
  for (const ComparedRow& row : compare) {
    Bar b;
    b.label = row.name;
    if (!row.gpus) {
      b.text = "cannot serve: " + row.note;
    } else {
      b.value = *row.gpus;
      b.text = fmt::format("{} GPUs{}", Num(b.value),
                           row.bound ? " (bound)" : " (" + row.status + ")");
    }
    b.colour = row.bound ? "#BBBBBB" : "#4477AA";
    b.title = row.note.empty() ? b.label : row.note;
    bars.push_back(std::move(b));
  }
  return BarChart(bars, "compare");
}

std::string PlanSummary(const cluster::TransitionPlan& plan) {
  std::map<std::string, int> kinds;
  for (const cluster::Action& a : plan.actions) {
    ++kinds[std::string(cluster::KindName(a.kind))];
  }
  std::vector<int> stages = cluster::Stages(plan);
  int count = 0;
  for (int s : stages) count = std::max(count, s + 1);
  std::vector<std::string> parts;
  for (const auto& [kind, n] : kinds)
    parts.push_back(fmt::format("{} {}", n, kind));
  return fmt::format(
      "<p id=\"plan\" data-actions=\"{}\" data-stages=\"{}\">The plan: {} "
      "actions ({}) in {} stages (actions of a stage can start "
      "together).</p>\n",
      plan.actions.size(), count, plan.actions.size(), fmt::join(parts, ", "),
      count);
}

std::string ServeChart(const std::vector<serving::ServiceServing>& serve,
                       const Palette& palette) {
  std::vector<Bar> bars;
  for (const serving::ServiceServing& s : serve) {
    for (const auto& [q, ms] : {std::pair<std::string, double>{"p50", s.p50_ms},
                                {"p90", s.p90_ms},
                                {"p99", s.p99_ms}}) {
      Bar b;
      b.label = fmt::format("{} {}", s.service, q);
      b.value = ms;
      b.reference = s.slo_ms;
      b.colour = palette.Colour(s.service);
      b.text = fmt::format(
          "{} ms (SLO {} ms){}", Num(b.value), Num(*b.reference),
          q == "p99" ? fmt::format(", {}% within", Num(100 * s.within_slo))
                     : "");
      bars.push_back(std::move(b));
    }
    if (!s.tokens) continue;
    // An LLM service's token figures against their SLOs, and what backs
    // them (docs/llm.md).
    const serving::LlmServing& l = *s.tokens;
    for (const auto& [what, ms, slo] :
         {std::tuple{"TTFT p50", l.ttft_p50_ms, l.ttft_slo_ms},
          {"TTFT p99", l.ttft_p99_ms, l.ttft_slo_ms},
          {"TPOT p50", l.tpot_p50_ms, l.tpot_slo_ms},
          {"TPOT p99", l.tpot_p99_ms, l.tpot_slo_ms}}) {
      Bar b;
      b.label = fmt::format("{} {}", s.service, what);
      b.value = ms;
      b.reference = slo;
      b.colour = palette.Colour(s.service);
      b.text = fmt::format("{} ms (SLO {} ms; {})", Num(ms), Num(slo), l.basis);
      bars.push_back(std::move(b));
    }
  }
  return BarChart(bars, "serve", BarScale::kOfReference);
}

}  // namespace

std::string RenderReport(const ReportInput& in) {
  std::vector<std::string> services;
  if (in.before) {
    for (const auto& s : in.before->services) services.push_back(s.name);
  }
  if (in.deployment) {
    for (const auto& s : in.deployment->services) services.push_back(s.name);
  }
  if (in.replay) {
    services.insert(services.end(), in.replay->services.begin(),
                    in.replay->services.end());
  }
  Palette palette(services);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>{0}</title><style>{1}{2}</style></head><body>\n{3}{4}<main>\n"
      "<h1>{0}</h1>\n",
      Escape(in.title), kStyle, FilterStyle(palette), PatternDefs(),
      FilterAnchors(palette));
  if (in.deployment) {
    const deployment::Deployment& d = *in.deployment;
    int serving = d.UsedGpus();
    out += fmt::format(
        "<p id=\"summary\" data-gpus=\"{0}\" data-serving=\"{1}\">{0} "
        "GPUs, {1} serving, {2} services{3}.</p>\n",
        d.gpus.size(), serving, d.services.size(),
        d.summary ? Escape(fmt::format(
                        "; {} says {} GPUs ({})", d.summary->algorithm,
                        d.summary->gpus,
                        deployment::SolveStatusName(d.summary->status)))
                  : "");
  }
  out += Legend(palette);
  if (in.deployment) {
    const deployment::Deployment& d = *in.deployment;
    if (in.before) {
      out += "<h2>Before the transition</h2>\n" +
             DeploymentView(*in.before, palette, in.compact_above);
      out += "<h2>After: the deployment</h2>\n" + Freed(*in.before, d);
    } else {
      out += "<h2>The deployment</h2>\n";
    }
    out += DeploymentView(d, palette, in.compact_above);
  }
  if (!in.supply.empty()) {
    out +=
        "<h2>Services: provided vs required</h2>\n<p class=\"muted\">The "
        "bar is the capacity the deployment provides, the tick the "
        "required rate.</p>\n" +
        SupplyChart(in.supply, palette);
  }
  if (in.compare) {
    out += "<h2>GPUs by algorithm</h2>\n" + CompareChart(*in.compare);
  }
  if (in.plan || in.simulation) out += "<h2>The transition</h2>\n";
  if (in.plan) out += PlanSummary(*in.plan);
  if (in.simulation) {
    const cluster::TransitionReport& sim = *in.simulation;
    out += fmt::format(
        "<p id=\"simulation\" data-ok=\"{}\">Simulated: {} s, peak {} GPUs, "
        "{} at the end; {}.</p>\n",
        sim.ok(), Num(sim.makespan_s), sim.peak_gpus, sim.final_gpus,
        sim.short_services.empty()
            ? "no service went below its floor min(before, after)"
            : "<b class=\"bad\">services went below their floor</b>");
    out +=
        "<h3>Actions over time</h3>\n<p class=\"muted\"><span "
        "style=\"color:#228833\">create</span> \u00b7 <span "
        "style=\"color:#CC3311\">delete</span> \u00b7 <span "
        "style=\"color:#0077BB\">migrate</span> \u00b7 <span "
        "style=\"color:#EE7733\">repartition</span></p>\n" +
        TimelineView(sim);
    out += "<h3>Ready capacity against the floor</h3>\n" +
           CapacityView(sim, palette);
    out += "<h3>What moved where</h3>\n" + MovesView(sim);
  }
  if (in.serve) {
    out += "<h2>Serving: latency against the SLO</h2>\n" +
           ServeChart(*in.serve, palette);
  }
  if (in.replay) {
    out += "<h2>The replayed day</h2>\n" + ReplayRunsTable(*in.replay);
    out +=
        "<h3>GPUs over time</h3>\n<p class=\"muted\">The line is the "
        "GPUs in use (a transition counts its peak while it runs), the "
        "dashed line static provisioning for the peak; each move of the "
        "policy is marked <span style=\"color:#CC3311\">up</span> or "
        "<span style=\"color:#228833\">down</span>.</p>\n" +
        ReplayGpusView(*in.replay);
    out += "<h3>Ready capacity against the rate received</h3>\n" +
           ReplayServicesView(*in.replay, in.rates ? &*in.rates : nullptr,
                              palette);
  }
  return out + "</main></body></html>\n";
}

}  // namespace migserve::report
