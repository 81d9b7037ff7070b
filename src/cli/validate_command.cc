// migserve validate -w W -p P -d D [--format table|json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cli/table.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "queueing/credit_cache.h"

namespace migserve::cli {
namespace {

struct ValidateFlags {
  std::string workload;
  std::string profiles;
  std::string deployment;
  std::string format = "table";
};

// The report as JSON (docs/formats.md, "validate --format json").
std::string ReportJson(const deployment::ValidationReport& report) {
  nlohmann::json services = nlohmann::json::array();
  for (const deployment::ServiceReport& s : report.services) {
    services.push_back({{"name", s.name},
                        {"required", s.required},
                        {"provided", s.provided},
                        {"satisfaction", s.satisfaction()},
                        {"replicas", s.replicas}});
  }
  return nlohmann::json({{"valid", report.ok()},
                         {"gpus", report.gpus},
                         {"used_gpus", report.used_gpus},
                         {"services", std::move(services)},
                         {"problems", report.problems},
                         {"warnings", report.warnings}})
             .dump(2) +
         "\n";
}

Status RunValidate(const ValidateFlags& flags, CommandContext* context) {
  // Every credit it checks is computed here, never read from the credit
  // cache: a cache that says more than a replica gives must not make a
  // deployment valid.
  queueing::ScopedCreditCache no_cache(nullptr);
  auto inputs = LoadInputs(flags.workload, flags.profiles, context->err,
                           context->progress_every_s);
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
  if (flags.format == "json") {
    out << ReportJson(*report);
    if (!report->ok()) context->exit_code = kExitNo;
    return Status::Ok();
  }
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
  app->add_option("--format", flags->format,
                  "table, or json (valid, gpus, used_gpus, per service "
                  "required, provided, satisfaction and replicas, problems, "
                  "warnings)")
      ->capture_default_str()
      ->check(OneOf({"table", "json"}));
  OnRun(app, context,
        [flags, context] { return RunValidate(*flags, context); });
}

}  // namespace migserve::cli
