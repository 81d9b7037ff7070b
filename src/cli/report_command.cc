// migserve report -d D [-w W -p P] [--from D0] [--compare C] [--plan PL]
//     [--simulation R] [--serve S] [--replay RP [--trace T]] [-o report.html]
#include <fmt/format.h>

#include <utility>

#include "autoscale/replay_json.h"
#include "autoscale/trace.h"
#include "boundary/input_file.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cluster/plan_json.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "report/html_report.h"
#include "serving/serve_json.h"

namespace migserve::cli {
namespace {

struct ReportFlags {
  std::string deployment;
  std::string workload;
  std::string profiles;
  std::string from;
  std::string compare;
  std::string plan;
  std::string simulation;
  std::string serve;
  std::string replay;
  std::string trace;
  std::string title;
  int compact_above = 100;
  std::string output;
};

// Reads `path` (if given) with `parse` into `out`; an error says which
// command writes what the flag takes.
template <typename T, typename Parse>
Status LoadTyped(const std::string& flag, const std::string& path,
                 const char* writer, Parse parse, std::optional<T>* out) {
  if (path.empty()) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  StatusOr<T> parsed = parse(text, path);
  if (!parsed.ok()) {
    return Status::InvalidArgument(
        fmt::format("{} ({}: not the JSON that {} writes)",
                    parsed.status().message(), flag, writer));
  }
  *out = *std::move(parsed);
  return Status::Ok();
}

// Required vs provided per service: from the profiles when given, else as
// the deployment file states it.
StatusOr<std::vector<report::ServiceSupply>> Supply(
    const ReportFlags& flags, const deployment::Deployment& d,
    CommandContext* context) {
  std::vector<report::ServiceSupply> supply;
  if (!flags.workload.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        auto inputs, LoadInputs(flags.workload, flags.profiles, context->err,
                                context->progress_every_s));
    MIGSERVE_ASSIGN_OR_RETURN(
        deployment::ValidationReport checked,
        deployment::Validate(d, inputs->workload, inputs->profiles,
                             *inputs->gpu));
    for (const deployment::ServiceReport& s : checked.services) {
      supply.push_back({s.name, s.required, s.provided});
    }
    return supply;
  }
  std::vector<std::string> names;
  for (const workload::Service& s : d.services) names.push_back(s.name);
  std::vector<double> provided = d.CreditedRates(names);
  for (size_t s = 0; s < d.services.size(); ++s) {
    supply.push_back({names[s], d.services[s].throughput.value(), provided[s]});
  }
  return supply;
}

// The rates of a replay's trace, for report to draw.
StatusOr<report::ObservedRates> LoadRates(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(autoscale::RateTrace trace,
                            autoscale::LoadRateTrace(path));
  return report::ObservedRates{std::move(trace.services),
                               std::move(trace.times_s),
                               std::move(trace.rates)};
}

// Which flags go together: what each needs is given.
Status CheckReportFlags(const ReportFlags& flags) {
  if (flags.deployment.empty() && flags.replay.empty()) {
    return Status::InvalidArgument(
        "report draws a deployment (-d) or a replayed day (--replay): give "
        "one");
  }
  if (flags.deployment.empty()) {
    for (const auto& [flag, value] : {std::pair{"-w", &flags.workload},
                                      {"--from", &flags.from},
                                      {"--compare", &flags.compare},
                                      {"--plan", &flags.plan},
                                      {"--simulation", &flags.simulation},
                                      {"--serve", &flags.serve}}) {
      if (!value->empty()) {
        return Status::InvalidArgument(fmt::format(
            "{} goes with the deployment it describes: give -d", flag));
      }
    }
  }
  if (!flags.trace.empty() && flags.replay.empty()) {
    return Status::InvalidArgument(
        "--trace gives the rates of a replayed day: give --replay");
  }
  if (flags.workload.empty() != flags.profiles.empty()) {
    return Status::InvalidArgument(
        "-w and -p go together: the profiles give each service's capacity");
  }
  return Status::Ok();
}

// The deployments a report draws; `in` points into them.
struct ReportFiles {
  std::optional<deployment::Deployment> deployment;
  std::optional<deployment::Deployment> before;
};

// Reads every file the flags name into `in`.
Status LoadReportInput(const ReportFlags& flags, CommandContext* context,
                       ReportFiles* files, report::ReportInput* in) {
  MIGSERVE_RETURN_IF_ERROR(LoadTyped("--replay", flags.replay,
                                     "replay --format json",
                                     autoscale::ParseReplayJson, &in->replay));
  if (!flags.trace.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(in->rates, LoadRates(flags.trace));
  }
  if (!flags.deployment.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(files->deployment,
                              deployment::LoadDeployment(flags.deployment));
    in->deployment = &*files->deployment;
    MIGSERVE_ASSIGN_OR_RETURN(in->supply,
                              Supply(flags, *files->deployment, context));
  }
  if (!flags.from.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(files->before,
                              deployment::LoadDeployment(flags.from));
    in->before = &*files->before;
  }
  MIGSERVE_RETURN_IF_ERROR(LoadTyped("--compare", flags.compare,
                                     "compare --format json",
                                     report::ParseCompareJson, &in->compare));
  MIGSERVE_RETURN_IF_ERROR(
      LoadTyped("--simulation", flags.simulation, "simulate --report",
                cluster::ParseTransitionReport, &in->simulation));
  MIGSERVE_RETURN_IF_ERROR(LoadTyped("--serve", flags.serve,
                                     "serve --format json",
                                     serving::ParseServeJson, &in->serve));
  if (!flags.plan.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(flags.plan));
    MIGSERVE_ASSIGN_OR_RETURN(in->plan, cluster::ParsePlan(text, flags.plan));
  }
  return Status::Ok();
}

Status RunReport(const ReportFlags& flags, CommandContext* context) {
  MIGSERVE_RETURN_IF_ERROR(CheckReportFlags(flags));
  report::ReportInput in;
  in.title = flags.title.empty()
                 ? "migserve: " + (flags.deployment.empty() ? flags.replay
                                                            : flags.deployment)
                 : flags.title;
  in.compact_above = flags.compact_above;
  ReportFiles files;
  MIGSERVE_RETURN_IF_ERROR(LoadReportInput(flags, context, &files, &in));
  std::string html = report::RenderReport(in);
  MIGSERVE_RETURN_IF_ERROR(context->Emit(flags.output, html));
  if (!flags.output.empty()) {
    std::vector<std::string> drawn;
    if (files.deployment) {
      drawn.push_back(fmt::format("{} GPUs", files.deployment->gpus.size()));
    }
    if (in.replay) {
      size_t moves = in.replay->events.size();
      drawn.push_back(fmt::format("a replayed day of {} move{}", moves,
                                  moves == 1 ? "" : "s"));
    }
    context->err << fmt::format("report: {} drawn -> {}\n",
                                fmt::join(drawn, " and "), flags.output);
  }
  return Status::Ok();
}

}  // namespace

void SetupReport(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ReportFlags>();
  app->add_option("-d,--deployment", flags->deployment,
                  "Deployment JSON to draw (or --replay alone)");
  app->add_option("-w,--workload", flags->workload,
                  "Workload YAML (with -p: capacities from the profiles)");
  app->add_option("-p,--profiles", flags->profiles,
                  "Profile CSV (- for stdin)");
  app->add_option("--from", flags->from,
                  "The deployment before the transition (drawn too; freed "
                  "GPUs named)");
  app->add_option("--compare", flags->compare,
                  "compare --format json output: GPUs per algorithm");
  app->add_option("--plan", flags->plan, "Plan JSON (plan -o)");
  app->add_option("--simulation", flags->simulation,
                  "simulate --report output: timeline and capacities");
  app->add_option("--serve", flags->serve,
                  "serve --format json output: latencies against the SLO");
  app->add_option("--replay", flags->replay,
                  "replay --format json output: the replayed day (GPUs over "
                  "time, each move, capacity per service)");
  app->add_option("--trace", flags->trace,
                  "The replay's rate trace CSV: each service's rate drawn "
                  "against its capacity");
  app->add_option("--title", flags->title, "Page title");
  app->add_option("--compact-above", flags->compact_above,
                  "Draw the fleet small (a block per node) when the "
                  "deployment has more GPUs than this")
      ->capture_default_str()
      ->check(NonNegative());
  app->add_option("-o,--output", flags->output,
                  "HTML file to write (default: stdout)");
  OnRun(app, context, [flags, context] { return RunReport(*flags, context); });
}

}  // namespace migserve::cli
