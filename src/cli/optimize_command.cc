// migserve optimize -w W -p P --algo A [--time-limit S] [--seed N] [-o F]
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/inputs.h"
#include "deployment/deployment_json.h"
#include "optimizer/fleet.h"
#include "optimizer/registry.h"
#include "profile/profile_csv.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct OptimizeFlags {
  std::string workload;
  std::string profiles;
  std::string algo;
  std::string output;
  optimizer::SolveOptions solve;
};

// A mixed fleet: only the exact optimizer weighs GPU types by cost.
void RunFleetOptimize(const OptimizeFlags& flags,
                      const workload::Workload& workload,
                      CommandContext* context) {
  if (flags.algo != "milp") {
    context->Fail(Status::FailedPrecondition(fmt::format(
        "{}: {} offers {} GPU types; only --algo milp plans mixed fleets",
        flags.algo, flags.workload, workload.offers.size())));
    return;
  }
  auto profiles = profile::LoadProfileCsv(flags.profiles);
  if (!profiles.ok()) {
    context->Fail(profiles.status());
    return;
  }
  WarnMeasurementGaps(workload, *profiles, context->err);
  auto run = optimizer::RunFleet(workload, *profiles, flags.solve);
  if (!run.ok()) {
    context->Fail(run.status());
    return;
  }
  if (run->outcome == optimizer::Outcome::kInfeasible) {
    context->Fail(Status::FailedPrecondition("milp: " + run->reason));
    return;
  }
  const deployment::Summary& s = *run->deployment.summary;
  context->err << fmt::format(
      "optimize: milp: {} GPUs ({}), cost {:.6g} (bound {:.6g}), {}, {:.3f} "
      "s\n",
      s.gpus, s.status, s.extra["cost"].get<double>(),
      s.extra["cost_bound"].get<double>(), s.extra["gpus_by_type"].dump(),
      s.seconds);
  context->Emit(flags.output, deployment::FormatDeployment(run->deployment));
}

void RunOptimize(const OptimizeFlags& flags, CommandContext* context) {
  auto optimizer = optimizer::MakeOptimizer(flags.algo);
  if (!optimizer.ok()) {
    context->Fail(optimizer.status());
    return;
  }
  auto fleet = workload::LoadWorkload(flags.workload);
  if (fleet.ok() && fleet->offers.size() > 1) {
    RunFleetOptimize(flags, *fleet, context);
    return;
  }
  auto inputs = LoadInputs(flags.workload, flags.profiles, context->err);
  if (!inputs.ok()) {
    context->Fail(inputs.status());
    return;
  }
  optimizer::RunResult run =
      optimizer::RunOptimizer(**optimizer, *(*inputs)->problem, flags.solve);
  if (run.outcome == optimizer::Outcome::kInfeasible) {
    context->Fail(Status::FailedPrecondition(
        fmt::format("{}: {}", flags.algo, run.reason)));
    return;
  }
  std::string json = deployment::FormatDeployment(run.deployment);
  const deployment::Summary& s = *run.deployment.summary;
  context->err << fmt::format(
      "optimize: {}: {} GPUs ({}), lower bound {}, {:.3f} s\n", s.algorithm,
      s.gpus, s.status, *s.lower_bound, s.seconds);
  context->Emit(flags.output, json);
}

}  // namespace

void SetupOptimize(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<OptimizeFlags>();
  app->add_option("-w,--workload", flags->workload, "Workload YAML")
      ->required();
  app->add_option("-p,--profiles", flags->profiles, "Profile CSV")->required();
  app->add_option("--algo", flags->algo,
                  fmt::format("Algorithm: {}",
                              fmt::join(optimizer::AlgorithmNames(), ", ")))
      ->required();
  app->add_option("-o,--output", flags->output,
                  "Deployment JSON file (default: stdout)");
  AddSolveOptions(app, &flags->solve, context);
  app->callback([flags, context] { RunOptimize(*flags, context); });
}

}  // namespace migserve::cli
