// migserve show -d D [--collapse-above N] [--format text|json]
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "deployment/deployment_json.h"
#include "report/terminal_view.h"

namespace migserve::cli {
namespace {

struct ShowFlags {
  std::string deployment;
  int collapse_above = 100;
  std::string format = "text";
};

Status RunShow(const ShowFlags& flags, CommandContext* context) {
  auto d = deployment::LoadDeployment(flags.deployment);
  if (!d.ok()) {
    return d.status();
  }
  context->out << (flags.format == "json"
                       ? report::TerminalViewJson(*d, flags.collapse_above)
                       : report::TerminalView(*d, flags.collapse_above));
  return Status::Ok();
}

}  // namespace

void SetupShow(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ShowFlags>();
  app->add_option("-d,--deployment", flags->deployment, "Deployment JSON")
      ->required();
  app->add_option("--collapse-above", flags->collapse_above,
                  "Show identical GPUs of a node once, with a count, when "
                  "the deployment has more GPUs than this")
      ->capture_default_str()
      ->check(NonNegative());
  app->add_option("--format", flags->format,
                  "text, or json (per node its groups of identical GPUs with "
                  "their instances; docs/formats.md)")
      ->capture_default_str()
      ->check(OneOf({"text", "json"}));
  OnRun(app, context, [flags, context] { return RunShow(*flags, context); });
}

}  // namespace migserve::cli
