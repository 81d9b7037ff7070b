// migserve show -d D [--collapse-above N]
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "deployment/deployment_json.h"
#include "report/terminal_view.h"

namespace migserve::cli {
namespace {

struct ShowFlags {
  std::string deployment;
  int collapse_above = 100;
};

void RunShow(const ShowFlags& flags, CommandContext* context) {
  auto d = deployment::LoadDeployment(flags.deployment);
  if (!d.ok()) {
    context->Fail(d.status());
    return;
  }
  context->out << report::TerminalView(*d, flags.collapse_above);
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
  app->callback([flags, context] { RunShow(*flags, context); });
}

}  // namespace migserve::cli
