// migserve place -d D --inventory I [-o F]
// Puts an optimized deployment on a fleet's real GPUs: each GPU config on a
// GPU of its own model, every inventory GPU listed (idle ones too).
#include <fmt/format.h>

#include "cli/command.h"
#include "cluster/inventory.h"
#include "cluster/placement.h"
#include "deployment/deployment_json.h"

namespace migserve::cli {
namespace {

struct PlaceFlags {
  std::string deployment;
  std::string inventory;
  std::string output;
};

Status RunPlace(const PlaceFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment d,
                            deployment::LoadDeployment(flags.deployment));
  MIGSERVE_ASSIGN_OR_RETURN(cluster::Inventory inventory,
                            cluster::LoadInventory(flags.inventory));
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment placed,
                            cluster::PlacedDeployment(d, inventory));
  context->err << fmt::format(
      "place: {} serving GPUs on {} inventory GPUs ({} nodes)\n",
      placed.UsedGpus(), placed.gpus.size(), inventory.nodes.size());
  return context->Emit(flags.output, deployment::FormatDeployment(placed));
}

}  // namespace

void SetupPlace(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<PlaceFlags>();
  app->add_option("-d,--deployment", flags->deployment,
                  "Deployment JSON (from optimize)")
      ->required();
  app->add_option("--inventory", flags->inventory,
                  "Fleet inventory YAML (nodes: [{name, gpu, gpus}])")
      ->required();
  app->add_option("-o,--output", flags->output,
                  "Write the placed deployment here (default: stdout)");
  OnRun(app, context, [flags, context] { return RunPlace(*flags, context); });
}

}  // namespace migserve::cli
