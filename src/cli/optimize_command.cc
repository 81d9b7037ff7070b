// migserve optimize -w W -p P [--algo A] [--time-limit S] [--seed N] [-o F]
//                   [--inventory I]
//                   [--from CURRENT [--extra-gpus K] [--weights G,S,R]]
#include <fmt/format.h>

#include <optional>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cluster/cluster_state.h"
#include "cluster/inventory.h"
#include "cluster/placement.h"
#include "controller/transition_target.h"
#include "deployment/deployment_json.h"
#include "optimizer/fleet.h"
#include "optimizer/registry.h"
#include "profile/profile_csv.h"
#include "util/file.h"
#include "util/interrupt.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct OptimizeFlags {
  std::string workload;
  std::string profiles;
  std::string algo = "milp";
  std::string output;
  optimizer::SolveOptions solve;
  std::string from;
  std::string inventory;
  std::vector<double> weights;
  int gpus_per_node = 8;
  optimizer::milp::TransitionOptions transition;
  bool timings = false;
};

// `d` as optimize writes it: with its wall-clock figures only if asked,
// and, made from a ServingWorkload's manifest that names its namespace and
// generation (`kubectl get servingworkload NAME -o yaml`), saying which
// (summary.workload, as the autoscaler's targets do).
deployment::Deployment AsWritten(const OptimizeFlags& flags,
                                 const workload::Workload& workload,
                                 deployment::Deployment d) {
  if (!d.summary) return d;
  d.summary->timings = flags.timings;
  const std::optional<workload::WorkloadResource>& from = workload.resource;
  if (from && !from->name.empty() && from->generation >= 1) {
    d.summary->workload =
        deployment::WorkloadOrigin{from->name, from->generation};
  }
  return d;
}

// Writes `d`, placed on the fleet of --inventory when there is one.
Status EmitPlaced(const OptimizeFlags& flags,
                  const std::optional<cluster::Inventory>& inventory,
                  const workload::Workload& workload,
                  const deployment::Deployment& d, CommandContext* context) {
  if (!inventory) {
    return context->Emit(flags.output, deployment::FormatDeployment(
                                           AsWritten(flags, workload, d)));
  }
  MIGSERVE_ASSIGN_OR_RETURN(deployment::Deployment placed,
                            cluster::PlacedDeployment(d, *inventory));
  return context->Emit(flags.output, deployment::FormatDeployment(
                                         AsWritten(flags, workload, placed)));
}

// The nodes of `inventory` with GPUs of `model`: the failure domains of
// survive: {domain: node}.
StatusOr<std::vector<optimizer::FleetNode>> FleetNodes(
    const cluster::Inventory& inventory, const std::string& model) {
  std::vector<optimizer::FleetNode> nodes;
  for (const cluster::InventoryNode& n : inventory.nodes) {
    if (n.model->name == model) nodes.push_back({n.name, n.gpus});
  }
  if (nodes.empty()) {
    return Status::InvalidArgument(
        fmt::format("--inventory: {} has no {} GPUs", inventory.source, model));
  }
  return nodes;
}

// --from: the fewest GPUs, reached from the current deployment with the
// fewest replica starts.
Status RunTransitionOptimize(const OptimizeFlags& flags,
                             CommandContext* context) {
  if (flags.algo != "milp") {
    return Status::InvalidArgument(fmt::format(
        "--from: only --algo milp optimizes from a current deployment, not "
        "'{}'",
        flags.algo));
  }
  optimizer::milp::TransitionOptions transition = flags.transition;
  if (!flags.weights.empty()) {
    transition.weights = optimizer::milp::TransitionWeights{
        flags.weights[0], flags.weights[1], flags.weights[2]};
  }
  if (Status s = transition.Validate(); !s.ok()) {
    return s;
  }
  auto inputs = LoadInputs(flags.workload, flags.profiles, context->err,
                           context->progress_every_s);
  if (!inputs.ok()) {
    return inputs.status();
  }
  auto from = deployment::LoadDeployment(flags.from);
  if (!from.ok()) {
    return from.status();
  }
  auto current = cluster::ClusterFromDeployment(*from, {flags.gpus_per_node});
  if (!current.ok()) {
    return current.status();
  }
  auto target = controller::OptimizeFromCurrent(
      *current, *(*inputs)->problem, (*inputs)->profiles, flags.solve,
      transition, {flags.gpus_per_node});
  if (!target.ok()) {
    return target.status();
  }
  const deployment::Summary& s = *target->summary;
  const deployment::TransitionCost& cost = s.transition->cost;
  const deployment::TransitionCost& plain = s.transition->plain_optimum;
  context->err << fmt::format(
      "optimize: milp --from: {} GPUs ({}), lower bound {}, {} pod starts "
      "(plain optimum: {}), {} repartitioned GPUs ({}), {} kept replicas "
      "({}), {:.3f} s\n",
      s.gpus, deployment::SolveStatusName(s.status), *s.lower_bound,
      cost.pod_starts, plain.pod_starts, cost.repartitioned_gpus,
      plain.repartitioned_gpus, cost.kept_replicas, plain.kept_replicas,
      s.seconds);
  MIGSERVE_RETURN_IF_ERROR(
      context->Emit(flags.output, deployment::FormatDeployment(AsWritten(
                                      flags, (*inputs)->workload, *target))));
  return Status::Ok();
}

// A mixed fleet: only the exact optimizer weighs GPU types by cost.
Status RunFleetOptimize(const OptimizeFlags& flags,
                        const std::optional<cluster::Inventory>& inventory,
                        const workload::Workload& workload,
                        CommandContext* context) {
  if (flags.algo != "milp") {
    return Status::InvalidArgument(fmt::format(
        "--algo {}: {} offers {} GPU types; only --algo milp plans mixed "
        "fleets",
        flags.algo, flags.workload, workload.offers.size()));
  }
  auto profiles = profile::LoadProfileCsv(flags.profiles);
  if (!profiles.ok()) {
    return profiles.status();
  }
  WarnMeasurementGaps(workload, *profiles, context->err);
  optimizer::SolveOptions solve = flags.solve;
  if (inventory) {
    // With survive: {domain: node}, the failure domains: each type's GPUs
    // go to the inventory's nodes of that type.
    for (const cluster::InventoryNode& n : inventory->nodes) {
      solve.nodes.push_back({n.name, n.gpus, false, n.model->name});
    }
  }
  auto run = optimizer::RunFleet(workload, *profiles, solve);
  if (!run.ok()) {
    return run.status();
  }
  if (run->outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition("milp: " + run->reason);
  }
  const deployment::Summary& s = *run->deployment.summary;
  const optimizer::MilpInfo& milp = *run->info.milp;
  context->err << fmt::format(
      "optimize: milp: {} GPUs ({}), cost {:.6g} (bound {:.6g}), {}, {:.3f} "
      "s\n",
      s.gpus, deployment::SolveStatusName(s.status), milp.cost.value_or(0),
      milp.cost_bound.value_or(0), nlohmann::json(milp.gpus_by_type).dump(),
      s.seconds);
  return EmitPlaced(flags, inventory, workload, run->deployment, context);
}

Status RunOptimizeOnce(const OptimizeFlags& flags, CommandContext* context) {
  auto optimizer = optimizer::MakeOptimizer(flags.algo);
  if (!optimizer.ok()) {
    return optimizer.status();
  }
  if (!flags.from.empty() && !flags.inventory.empty()) {
    return Status::InvalidArgument(
        "--inventory: --from places the deployment on the current one's "
        "GPUs; place it with `migserve place` instead");
  }
  std::optional<cluster::Inventory> inventory;
  if (!flags.inventory.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(inventory,
                              cluster::LoadInventory(flags.inventory));
  }
  auto loaded = workload::LoadWorkload(flags.workload);
  // Before the credits, which take a while for so many.
  if (loaded.ok() && loaded->services.size() > optimizer::kMaxServices) {
    return Status::InvalidArgument(fmt::format(
        "{}: {} services, more than the {} one workload may have; split it",
        flags.workload, loaded->services.size(), optimizer::kMaxServices));
  }
  if (loaded.ok() && loaded->offers.size() > 1) {
    if (!flags.from.empty()) {
      return Status::InvalidArgument(fmt::format(
          "--from: {} offers {} GPU types; optimizing from a current "
          "deployment is for one GPU type",
          flags.workload, loaded->offers.size()));
    }
    return RunFleetOptimize(flags, inventory, *loaded, context);
  }
  if (!flags.from.empty()) {
    return RunTransitionOptimize(flags, context);
  }
  MIGSERVE_RETURN_IF_ERROR(loaded.status());
  auto inputs = BuildInputs(std::move(*loaded), flags.profiles, context->err,
                            context->progress_every_s);
  if (!inputs.ok()) {
    return inputs.status();
  }
  optimizer::SolveOptions solve = flags.solve;
  if (inventory) {
    MIGSERVE_ASSIGN_OR_RETURN(
        solve.nodes, FleetNodes(*inventory, (*inputs)->problem->gpu.name));
  }
  optimizer::RunResult run =
      optimizer::RunOptimizer(**optimizer, *(*inputs)->problem, solve);
  if (run.outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition(
        fmt::format("{}: {}", flags.algo, run.reason));
  }
  const deployment::Summary& s = *run.deployment.summary;
  context->err << fmt::format(
      "optimize: {}: {} GPUs ({}), lower bound {}, {:.3f} s\n", s.algorithm,
      s.gpus, deployment::SolveStatusName(s.status), *s.lower_bound, s.seconds);
  return EmitPlaced(flags, inventory, (*inputs)->workload, run.deployment,
                    context);
}

// Checks the output path first (a long search must not fail at the end
// for a typo), and turns an interrupt into exit 130 once the best so far is
// written.
Status RunOptimize(const OptimizeFlags& flags, CommandContext* context) {
  if (Status s = CheckOutputDirectory(flags.output); !s.ok()) {
    return s.WithPrefix("-o");
  }
  if (Status s = flags.solve.Validate(); !s.ok()) {
    return s;
  }
  InstallInterruptHandlers();
  MIGSERVE_RETURN_IF_ERROR(RunOptimizeOnce(flags, context));
  if (Interrupted() && context->exit_code == kExitOk) {
    context->err << "optimize: interrupted; wrote the best deployment found "
                    "so far (summary.status: interrupted)\n";
    context->exit_code = kExitInterrupted;
  }
  return Status::Ok();
}

}  // namespace

void SetupOptimize(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<OptimizeFlags>();
  AddWorkloadOptions(app, &flags->workload, &flags->profiles);
  app->add_option("--algo", flags->algo,
                  fmt::format("Algorithm: {} (milp, the exact optimizer, "
                              "unless named)",
                              fmt::join(optimizer::AlgorithmNames(), ", ")))
      ->capture_default_str();
  app->add_option("-o,--output", flags->output,
                  "Deployment JSON file (default: stdout)");
  app->add_option("--inventory", flags->inventory,
                  "Place the deployment on this fleet (inventory YAML, as "
                  "`migserve place`); with survive: {domain: node}, its "
                  "nodes are the failure domains and the GPUs are spread "
                  "over them")
      ->check(CLI::ExistingFile);
  app->add_option("--from", flags->from,
                  "Current deployment JSON (from observe, place or a previous "
                  "optimize): among the deployments with the fewest GPUs, "
                  "find the one reached with the fewest replica starts, then "
                  "the fewest repartitioned GPUs (--algo milp)");
  app->add_option("--extra-gpus", flags->transition.extra_gpus,
                  "With --from: GPUs above the fewest the result may use "
                  "when that saves starts")
      ->default_val(0)
      ->check(NonNegative());
  app->add_option("--weights", flags->weights,
                  "With --from: minimize GPUS x GPUs + STARTS x starts + "
                  "REPARTITIONS x repartitioned GPUs (within --extra-gpus) "
                  "instead of starts, then GPUs, then repartitions")
      ->delimiter(',')
      ->expected(3)
      ->type_name("GPUS,STARTS,REPARTITIONS");
  app->add_option("--patience-nodes", flags->transition.patience_nodes,
                  "With --from: end the search for fewer starts once its "
                  "best has not improved for this many nodes (0: run to "
                  "--milp-nodes)")
      ->capture_default_str()
      ->check(NonNegative());
  app->add_option("--patience", flags->transition.patience_s,
                  "With --from: ... or for this many seconds (0: never; "
                  "wall-clock, so the answer may differ run to run)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app->add_flag("--timings", flags->timings,
                "Write the search's wall-clock figures (summary.seconds, "
                "phase_seconds) into the deployment; without them the file "
                "is the same for the same inputs on any machine");
  app->add_option("--gpus-per-node", flags->gpus_per_node,
                  "With --from: GPUs per node for GPUs the current deployment "
                  "puts on no node, and for new GPUs")
      ->capture_default_str()
      ->check(Positive());
  AddSolveOptions(app, &flags->solve, context);
  OnRun(app, context,
        [flags, context] { return RunOptimize(*flags, context); });
}

}  // namespace migserve::cli
