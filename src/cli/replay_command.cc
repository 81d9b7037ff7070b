// migserve replay --trace T.csv -w W -p P [--interval S] [--window S]
//   [--headroom H] [--cooldown S] [--oracle-interval S] [--format table|json]
//   [-o F]
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <sstream>

#include "autoscale/replay.h"
#include "autoscale/replay_json.h"
#include "boundary/number.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cli/policy_flags.h"
#include "cli/table.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct ReplayFlags {
  std::string trace;
  std::string workload;
  std::string profiles;
  std::string format = "table";
  std::string output;
  autoscale::ReplayOptions options;
};

std::string Table(const autoscale::ReplayReport& r) {
  std::ostringstream out;
  TextTable runs({"provisioning", "GPU-hours", "peak GPUs", "transitions",
                  "short minutes"});
  auto add = [&](const char* name, const autoscale::ReplayRun& run) {
    runs.AddRow({name, fmt::format("{:.1f}", run.gpu_hours),
                 std::to_string(run.peak_gpus), std::to_string(run.transitions),
                 fmt::format("{:.1f}", run.short_minutes)});
  };
  add("policy", r.policy);
  add("static peak", r.static_peak);
  add("oracle", r.oracle);
  runs.Print(out);
  double saved = r.static_peak.gpu_hours > 0
                     ? 1 - r.policy.gpu_hours / r.static_peak.gpu_hours
                     : 0;
  out << fmt::format(
      "policy: {:.1f}% {} GPU-hours than static peak provisioning, {} moves "
      "({} down moves declined), {:.1f} service-minutes short\n",
      100 * std::abs(saved), saved >= 0 ? "fewer" : "more", r.events.size(),
      r.declined, r.policy.short_minutes);
  if (r.oracle.gpu_hours > 0) {
    out << fmt::format("policy: {:+.1f}% GPU-hours against the oracle's\n",
                       100 * (r.policy.gpu_hours / r.oracle.gpu_hours - 1));
  }
  if (r.max_gpus > 0) {
    out << fmt::format(
        "budget: {} GPUs; the policy's peak {} (its transitions included), "
        "{} moves not made over it\n",
        r.max_gpus, r.policy.peak_gpus, r.over_budget);
  }
  for (const auto& [service, minutes] : r.policy.short_minutes_by_service) {
    out << fmt::format("  {} short for {:.1f} min\n", service, minutes);
  }
  return out.str();
}

Status RunReplay(const ReplayFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(autoscale::RateTrace trace,
                            autoscale::LoadRateTrace(flags.trace));
  MIGSERVE_ASSIGN_OR_RETURN(workload::Workload workload,
                            workload::LoadWorkload(flags.workload));
  MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable profiles,
                            profile::LoadProfileCsv(flags.profiles));
  WarnMeasurementGaps(workload, profiles, context->err);
  autoscale::ReplayOptions options = flags.options;
  options.progress = [context](const std::string& line) {
    context->Progress(line);
  };
  options.solve.progress = nullptr;
  MIGSERVE_ASSIGN_OR_RETURN(
      autoscale::ReplayReport report,
      autoscale::Replay(trace, workload, profiles, options));
  std::string text = flags.format == "json"
                         ? autoscale::ReplayJson(report).dump(2) + "\n"
                         : Table(report);
  return context->Emit(flags.output, text);
}

}  // namespace

void SetupReplay(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ReplayFlags>();
  app->add_option("--trace", flags->trace,
                  "Rate trace CSV: time_s,service,rate (docs/autoscale.md)")
      ->required();
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  AddPolicyOptions(app, &flags->options.policy);
  app->add_option("--oracle-interval", flags->options.oracle_interval_s,
                  "Seconds between the oracle's re-optimizations (0: "
                  "--interval)")
      ->capture_default_str();
  app->add_option("--time-limit", flags->options.solve.time_limit_s,
                  "Seconds per milp run of the baselines and the start")
      ->capture_default_str();
  app->add_option("--move-nodes", flags->options.move_nodes,
                  "The work limit of a move's transition-aware milp runs "
                  "(optimize --from), CBC nodes: its proof of the fewest "
                  "starts seldom ends, and its answer seldom improves "
                  "after the first few hundred; the same trace gives the "
                  "same report on any machine")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_option("--move-time-limit", flags->options.move_time_limit_s,
                  "Seconds per transition-aware milp run of a move, a "
                  "safety net past --move-nodes")
      ->capture_default_str();
  app->add_option("--max-gpus", flags->options.max_gpus,
                  "GPU budget, the replayed cluster's GPUs: each move is "
                  "placed to hold no more while it runs, one that would take "
                  "over 90% of them goes to the trace's peaks instead, one "
                  "still over is not made (-1: static peak provisioning's "
                  "GPUs; 0: none)")
      ->capture_default_str()
      ->check(Between(-1, kMaxGpus));
  app->add_option("--seed", flags->options.seed,
                  "Seed of the action durations' jitter")
      ->capture_default_str();
  app->add_option("--format", flags->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app->add_option("-o,--output", flags->output,
                  "Write the report here (default: stdout)");
  OnRun(app, context, [flags, context] { return RunReplay(*flags, context); });
}

}  // namespace migserve::cli
