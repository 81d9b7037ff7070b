// migserve optimize -w W -p P --algo A [--time-limit S] [--seed N] [-o F]
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/inputs.h"
#include "deployment/deployment_json.h"
#include "optimizer/registry.h"

namespace migserve::cli {
namespace {

struct OptimizeFlags {
  std::string workload;
  std::string profiles;
  std::string algo;
  std::string output;
  optimizer::SolveOptions solve;
};

void RunOptimize(const OptimizeFlags& flags, CommandContext* context) {
  auto optimizer = optimizer::MakeOptimizer(flags.algo);
  if (!optimizer.ok()) {
    context->Fail(optimizer.status());
    return;
  }
  auto inputs = LoadInputs(flags.workload, flags.profiles);
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
      "optimize: {}: {} GPUs ({}), relaxed bound {}, {:.3f} s\n", s.algorithm,
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
