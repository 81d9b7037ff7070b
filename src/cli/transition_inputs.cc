#include "cli/transition_inputs.h"

#include <fmt/format.h>

#include <optional>

#include "boundary/number.h"
#include "cli/flag_checks.h"
#include "cluster/inventory.h"
#include "cluster/placement.h"
#include "deployment/deployment_json.h"
#include "deployment/validator.h"
#include "mig/gpu_catalog.h"
#include "profile/profile_csv.h"

namespace migserve::cli {

void AddTransitionOptions(CLI::App* app, TransitionFlags* flags) {
  app->add_option("--from", flags->from,
                  "Current deployment JSON (every GPU of the cluster)")
      ->required();
  app->add_option("--to", flags->to, "Target deployment JSON")->required();
  app->add_option("--inventory", flags->inventory,
                  "Fleet inventory YAML: the cluster is its GPUs, with the "
                  "current deployment placed on them (replaces --nodes and "
                  "--spare-gpus)");
  app->add_option("--spare-gpus", flags->spare_gpus,
                  "Idle GPUs added to the cluster for the transition")
      ->check(Between(0, kMaxGpus));
  app->add_option("--nodes", flags->nodes,
                  "Pad the cluster with idle GPUs to this many nodes")
      ->check(Between(0, kMaxGpus));
  app->add_option("--gpus-per-node", flags->gpus_per_node,
                  "GPUs per node for GPUs the deployment puts on no node")
      ->capture_default_str()
      ->check(Between(1, kMaxGpusPerNode));
  CLI::Option* no_migrate =
      app->add_flag("--no-migrate", flags->no_migrate,
                    "Move replicas by create then delete, never by migrate");
  app->add_flag("--remote-migrate", flags->remote_migrate,
                "Also migrate replicas across nodes")
      ->excludes(no_migrate);
  app->add_option("-p,--profiles", flags->profiles,
                  "Profile CSV: refuse a replica that declares more "
                  "throughput than was measured for it");
}

StatusOr<TransitionInputs> LoadTransition(const TransitionFlags& flags) {
  TransitionInputs in;
  MIGSERVE_ASSIGN_OR_RETURN(in.from, deployment::LoadDeployment(flags.from));
  MIGSERVE_ASSIGN_OR_RETURN(in.to, deployment::LoadDeployment(flags.to));
  // The safety proof counts each replica's declared throughput: refuse what
  // it cannot trust, against the profiles given (named first), the shipped
  // ones and the LLM model table.
  for (const deployment::Deployment* d : {&in.from, &in.to}) {
    MIGSERVE_RETURN_IF_ERROR(deployment::CheckReplicaServices(*d));
  }
  std::optional<profile::ProfileTable> profiles;
  if (!flags.profiles.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(profiles,
                              profile::LoadProfileCsv(flags.profiles));
  }
  for (const deployment::Deployment* d : {&in.from, &in.to}) {
    MIGSERVE_RETURN_IF_ERROR(
        deployment::CheckDeclaredCredits(*d, profiles ? &*profiles : nullptr));
  }
  if (!flags.inventory.empty()) {
    if (flags.nodes > 0 || flags.spare_gpus > 0) {
      return Status::InvalidArgument(
          "--inventory: the inventory is the whole fleet; leave out --nodes "
          "and --spare-gpus");
    }
    MIGSERVE_ASSIGN_OR_RETURN(cluster::Inventory inventory,
                              cluster::LoadInventory(flags.inventory));
    MIGSERVE_ASSIGN_OR_RETURN(in.current,
                              cluster::PlaceOnInventory(in.from, inventory));
  } else {
    MIGSERVE_ASSIGN_OR_RETURN(
        in.current,
        cluster::ClusterFromDeployment(
            in.from, {flags.gpus_per_node, flags.nodes * flags.gpus_per_node}));
    if (flags.spare_gpus > 0) {
      auto gpu = mig::GpuCatalog::Default().Find(in.from.gpu);
      if (!gpu.ok()) return gpu.status().WithPrefix(flags.from + ": gpu");
      cluster::AddSpareGpus(flags.spare_gpus, flags.gpus_per_node, **gpu,
                            &in.current);
    }
  }
  in.goal = controller::MakeGoal(in.from, in.to);
  in.planner.use_migrate = !flags.no_migrate;
  in.planner.remote_migrate = flags.remote_migrate;
  return in;
}

}  // namespace migserve::cli
