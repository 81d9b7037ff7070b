// migserve autoscale -w W -p P --prometheus URL --target T.json
//   [policy flags] [--step S] [--rate-window D] [--service-label L]
//   [--dry-run] [--pause-file F] [--once] [--metrics-port N]
#include <memory>

#include "autoscale/autoscaler.h"
#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/policy_flags.h"
#include "profile/profile_csv.h"
#include "util/interrupt.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct AutoscaleFlags {
  std::string workload;
  std::string profiles;
  bool once = false;
  autoscale::AutoscaleOptions options;
};

Status RunAutoscale(const AutoscaleFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(workload::Workload workload,
                            workload::LoadWorkload(flags.workload));
  MIGSERVE_ASSIGN_OR_RETURN(profile::ProfileTable profiles,
                            profile::LoadProfileCsv(flags.profiles));
  WarnMeasurementGaps(workload, profiles, context->err);
  autoscale::AutoscaleOptions options = flags.options;
  options.log = [context](const std::string& line) {
    context->err << line << std::endl;
  };
  options.sizer.solve.progress = nullptr;
  InstallInterruptHandlers();
  return autoscale::RunAutoscaler(workload, profiles, std::move(options),
                                  flags.once, InterruptFlag());
}

}  // namespace

void SetupAutoscale(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<AutoscaleFlags>();
  autoscale::AutoscaleOptions& o = flags->options;
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->add_option("--prometheus", o.prometheus,
                  "Prometheus server: http://host:port[/prefix]")
      ->required();
  app->add_option("--target", o.target,
                  "Target deployment JSON the controller follows: read as "
                  "the current deployment, rewritten on each move")
      ->required();
  AddPolicyOptions(app, &o.policy);
  app->add_option("--p99-near", o.policy.p99_near,
                  "Move up at once when a service's observed p99 exceeds this "
                  "x its SLO")
      ->capture_default_str();
  app->add_option("--step", o.observe.step_s,
                  "Seconds between the window's observations (query_range "
                  "step)")
      ->capture_default_str();
  app->add_option("--rate-window", o.observe.rate_window,
                  "Range of rate() in the default rate query (PromQL "
                  "duration)")
      ->capture_default_str();
  app->add_option("--service-label", o.observe.service_label,
                  "Label carrying the service's name on its replicas' series")
      ->capture_default_str();
  app->add_option("--move-time-limit", o.sizer.move_time_limit_s,
                  "Seconds per transition-aware milp run of a move")
      ->capture_default_str();
  app->add_option("--gpus-per-node", o.sizer.gpus_per_node,
                  "GPUs per node for GPUs the target puts on no node")
      ->capture_default_str();
  app->add_flag("--dry-run", o.dry_run,
                "Decide and say what would move; write nothing");
  app->add_option("--pause-file", o.pause_file,
                  "While this file exists, observe but decide nothing");
  app->add_flag("--once", flags->once,
                "One round (observe, decide, move), then exit: its error, if "
                "any");
  app->add_option("--metrics-address", o.metrics_address,
                  "Address of /metrics and /healthz")
      ->capture_default_str();
  app->add_option("--metrics-port", o.metrics_port,
                  "Port of /metrics and /healthz (0: any free; -1: none)")
      ->capture_default_str();
  OnRun(app, context,
        [flags, context] { return RunAutoscale(*flags, context); });
}

}  // namespace migserve::cli
