// migserve generate -p P [--gpu G] [--services N] [--distribution D] ...
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "optimizer/problem.h"
#include "profile/profile_csv.h"
#include "workload/generator.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct GenerateFlags {
  std::string profiles;
  std::string output;
  std::string distribution = "normal";
  std::string capacity_model = "p99";
  workload::GenerateOptions options;
};

Status RunGenerate(GenerateFlags flags, CommandContext* context) {
  if (flags.distribution == "normal") {
    flags.options.distribution = workload::RateDistribution::kNormal;
  } else if (flags.distribution == "lognormal") {
    flags.options.distribution = workload::RateDistribution::kLognormal;
  } else {
    return Status::InvalidArgument(
        fmt::format("--distribution: expected normal or lognormal, got '{}'",
                    flags.distribution));
  }
  flags.options.capacity_model =
      *queueing::ParseCapacityModel(flags.capacity_model);
  auto profiles = profile::LoadProfileCsv(flags.profiles);
  if (!profiles.ok()) {
    return profiles.status();
  }
  auto w = workload::GenerateWorkload(*profiles, flags.options);
  if (!w.ok()) {
    return w.status();
  }
  MIGSERVE_RETURN_IF_ERROR(
      context->Emit(flags.output, workload::FormatWorkload(*w)));
  return Status::Ok();
}

}  // namespace

void SetupGenerate(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<GenerateFlags>();
  workload::GenerateOptions& o = flags->options;
  app->add_option("-p,--profiles", flags->profiles, "Profile CSV (- for stdin)")
      ->required();
  app->add_option("-o,--output", flags->output,
                  "Workload YAML to write (default: stdout)");
  app->add_option("--gpu", o.gpu, "GPU model")->default_val(o.gpu);
  // No more than a workload may hold (optimize refuses more at once).
  app->add_option("--services", o.services, "Number of services")
      ->check(CLI::Range(1, optimizer::kMaxServices))
      ->default_val(o.services);
  app->add_option("--models", o.models,
                  "Models to use in turn (default: every measured model)")
      ->delimiter(',');
  app->add_option("--distribution", flags->distribution,
                  "Rates: normal or lognormal")
      ->default_val(flags->distribution);
  app->add_option("--mean", o.mean, "Mean rate before scaling")
      ->default_val(o.mean);
  app->add_option("--stddev", o.stddev, "Normal: standard deviation")
      ->default_val(o.stddev);
  app->add_option("--sigma", o.sigma, "Lognormal: sigma of the log")
      ->default_val(o.sigma);
  app->add_option("--latency", o.latencies_ms,
                  "SLO latencies in ms, one drawn per service")
      ->delimiter(',')
      ->default_str("100");
  app->add_option("--target-gpus", o.target_gpus,
                  "Scale rates so the relaxed bound is this many GPUs (0: "
                  "no scaling)")
      ->default_val(o.target_gpus);
  app->add_option("--latency-budget", o.latency_budget,
                  "Profile latency must be <= budget x SLO")
      ->default_val(o.latency_budget);
  app->add_option("--capacity-model", flags->capacity_model,
                  "What a replica is credited with, p99 or paper: written "
                  "to the workload and used to size it")
      ->check(OneOf({"p99", "paper"}))
      ->default_val(flags->capacity_model);
  app->add_option("--max-procs", o.max_procs, "MPS processes per instance")
      ->default_val(o.max_procs);
  app->add_option("--seed", o.seed, "Random seed")->default_val(o.seed);
  OnRun(app, context,
        [flags, context] { return RunGenerate(*flags, context); });
}

}  // namespace migserve::cli
