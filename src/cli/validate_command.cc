// migserve validate -w W -p P -d D
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/table.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"

namespace migserve::cli {
namespace {

struct ValidateFlags {
  std::string workload;
  std::string profiles;
  std::string deployment;
};

Status RunValidate(const ValidateFlags& flags, CommandContext* context) {
  auto inputs = LoadInputs(flags.workload, flags.profiles, context->err);
  if (!inputs.ok()) {
    return inputs.status();
  }
  auto deployment = deployment::LoadDeployment(flags.deployment);
  if (!deployment.ok()) {
    return deployment.status();
  }
  const Inputs& in = **inputs;
  auto report =
      deployment::Validate(*deployment, in.workload, in.profiles, *in.gpu);
  if (!report.ok()) {
    return report.status();
  }
  for (const std::string& w : report->warnings) {
    context->err << fmt::format("migserve: warning: {}: {}\n", flags.deployment,
                                w);
  }
  std::ostream& out = context->out;
  TextTable table(
      {"service", "required", "provided", "satisfaction", "replicas"});
  for (const deployment::ServiceReport& s : report->services) {
    table.AddRow({s.name, fmt::format("{:.6g}", s.required),
                  fmt::format("{:.6g}", s.provided),
                  fmt::format("{:.1f}%", 100 * s.satisfaction()),
                  std::to_string(s.replicas)});
  }
  table.Print(out);
  out << fmt::format("gpus: {} listed, {} serving\n", report->gpus,
                     report->used_gpus);
  if (report->ok()) {
    out << "valid\n";
    return Status::Ok();
  }
  for (const std::string& p : report->problems) {
    context->err << fmt::format("migserve: {}: {}\n", flags.deployment, p);
  }
  out << fmt::format("invalid: {} problem(s)\n", report->problems.size());
  context->exit_code = kExitNo;
  return Status::Ok();
}

}  // namespace

void SetupValidate(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ValidateFlags>();
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->add_option("-d,--deployment", flags->deployment, "Deployment JSON")
      ->required();
  OnRun(app, context,
        [flags, context] { return RunValidate(*flags, context); });
}

}  // namespace migserve::cli
