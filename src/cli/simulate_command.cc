// migserve simulate --from D1 --to D2 [--spare-gpus K] [--seed N] [...]
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "boundary/csv.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "cli/transition_inputs.h"
#include "cluster/cluster_state.h"
#include "cluster/transition_report.h"
#include "controller/transition_simulation.h"
#include "deployment/deployment_json.h"
#include "util/file.h"

namespace migserve::cli {
namespace {

struct SimulateFlags {
  TransitionFlags transition;
  uint64_t seed = 1;
  std::string journal = ":memory:";
  std::string report;
  std::string before;  // the cluster at the start, as a placed deployment
  std::string after;   // and at the end
  cluster::ActionDurations durations;
  cluster::Faults faults;
  std::string lose_gpu;
};

// The GPU --lose-gpu names: NODE/INDEX, or the id of a GPU of a
// deployment without nodes; InvalidArgument unless the cluster has it.
StatusOr<cluster::GpuId> LoseGpu(const std::string& flag, int gpus_per_node,
                                 const cluster::ClusterState& current) {
  std::optional<cluster::GpuId> gpu = cluster::ParseGpuId(flag);
  int id = 0;
  if (!gpu && ParseInt(flag, &id) && id >= 0) {
    gpu = cluster::UnplacedGpuId(id, gpus_per_node);
  }
  if (!gpu) {
    return Status::InvalidArgument(fmt::format(
        "--lose-gpu: \"{}\" is not NODE/INDEX (node-1/2, say)", flag));
  }
  if (current.gpus.empty()) {
    return Status::InvalidArgument(fmt::format(
        "--lose-gpu: the cluster has no GPU, so not {}", gpu->ToString()));
  }
  if (current.FindGpu(*gpu) == nullptr) {
    return Status::InvalidArgument(fmt::format(
        "--lose-gpu: the cluster has no GPU {} (it has {} GPUs, {} to {})",
        gpu->ToString(), current.gpus.size(),
        current.gpus.front().id.ToString(), current.gpus.back().id.ToString()));
  }
  return *gpu;
}

// The report as the terminal shows it: counts, times, GPUs and a table of
// the services.
void PrintReport(const cluster::TransitionReport& r, std::ostream& out) {
  auto count = [&](const char* kind) {
    auto it = r.actions.find(kind);
    return it == r.actions.end() ? 0 : it->second;
  };
  out << fmt::format(
      "actions: {} create, {} delete, {} local migrate, {} remote migrate, "
      "{} repartition\n",
      count("create"), count("delete"), count("local migrate"),
      count("remote migrate"), count("repartition"));
  out << fmt::format(
      "makespan: {:.1f} s (repartition {:.1f} s, replicas only {:.1f} s; "
      "planner {:.1f} ms)\n",
      r.makespan_s, r.repartition_s, r.replicas_s, 1000 * r.planner_s);
  out << fmt::format("gpus: peak {}, final {}, target {}\n", r.peak_gpus,
                     r.final_gpus, r.target_gpus);
  TextTable table(
      {"service", "floor", "lowest", "min satisfaction", "final", "required"});
  for (const cluster::ReportedService& s : r.services) {
    table.AddRow({s.name, fmt::format("{:.6g}", s.floor),
                  fmt::format("{:.6g}", s.lowest),
                  fmt::format("{:.1f}%", 100 * s.min_satisfaction),
                  fmt::format("{:.6g}", s.final_capacity),
                  fmt::format("{:.6g}", s.required)});
  }
  table.Print(out);
}

// --report, --before and --after, each if asked for.
Status WriteOutputs(const SimulateFlags& flags, const TransitionInputs& in,
                    const controller::Simulation& sim) {
  auto placed = [](const cluster::ClusterState& state,
                   const deployment::Deployment& d) {
    return deployment::FormatDeployment(
        cluster::ToDeployment(state, d.services));
  };
  if (!flags.report.empty()) {
    MIGSERVE_RETURN_IF_ERROR(WriteFileAtomic(
        flags.report, cluster::FormatTransitionReport(sim.report)));
  }
  if (!flags.before.empty()) {
    MIGSERVE_RETURN_IF_ERROR(
        WriteFileAtomic(flags.before, placed(in.current, in.from)));
  }
  if (!flags.after.empty()) {
    MIGSERVE_RETURN_IF_ERROR(
        WriteFileAtomic(flags.after, placed(sim.end, in.to)));
  }
  return Status::Ok();
}

Status RunSimulate(const SimulateFlags& flags, CommandContext* context) {
  MIGSERVE_ASSIGN_OR_RETURN(TransitionInputs in,
                            LoadTransition(flags.transition));
  controller::SimulationOptions options;
  options.durations = flags.durations;
  options.faults = flags.faults;
  options.seed = flags.seed;
  options.journal = flags.journal;
  options.planner = in.planner;
  if (!flags.lose_gpu.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(
        options.faults.lose_gpu,
        LoseGpu(flags.lose_gpu, flags.transition.gpus_per_node, in.current));
  }
  options.progress = [context](const std::string& line) {
    context->Progress(line);
  };
  MIGSERVE_ASSIGN_OR_RETURN(
      controller::Simulation sim,
      controller::SimulateTransition(in.current, in.to, in.goal, options));
  const cluster::TransitionReport& report = sim.report;
  if (flags.faults.fail_action >= 0 &&
      std::none_of(report.timeline.begin(), report.timeline.end(),
                   [&](const cluster::ReportedAction& a) {
                     return a.id == flags.faults.fail_action;
                   })) {
    return Status::InvalidArgument(fmt::format(
        "--fail-action: the transition ran no action {} (it ran {} actions; "
        "`plan --format text` lists their ids)",
        flags.faults.fail_action, report.timeline.size()));
  }
  sim.report.from = flags.transition.from;
  sim.report.to = flags.transition.to;
  PrintReport(report, context->out);
  MIGSERVE_RETURN_IF_ERROR(WriteOutputs(flags, in, sim));
  if (report.survive_dropped.dropped()) {
    context->out << report.survive_dropped.Sentence() << "\n";
  }
  if (!report.degraded.empty()) {
    context->out << "degraded: " << report.degraded << "\n";
  }
  if (report.ok()) {
    context->out
        << "no drop: every service stayed at >= 100% of min(before, after)\n";
    return Status::Ok();
  }
  for (const std::string& p : report.problems) {
    context->err << "migserve: " << p << "\n";
  }
  context->exit_code =
      sim.run.ok() || sim.run.code() == Status::Code::kFailedPrecondition
          ? kExitNo
          : kExitBadInput;
  return Status::Ok();
}

}  // namespace

void SetupSimulate(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<SimulateFlags>();
  AddTransitionOptions(app, &flags->transition);
  app->add_option("--seed", flags->seed, "Seed of the duration jitter")
      ->capture_default_str();
  app->add_option("--journal", flags->journal,
                  "SQLite journal file (resumes an unfinished plan)")
      ->capture_default_str();
  app->add_option("--report", flags->report,
                  "Also write the report as JSON (docs/formats.md)");
  app->add_option("--before", flags->before,
                  "Also write the cluster at the start as a placed "
                  "deployment (for report --from)");
  app->add_option("--after", flags->after,
                  "Also write the cluster at the end as a placed deployment "
                  "(for report -d)");
  cluster::ActionDurations& d = flags->durations;
  app->add_option("--create-s", d.create_s, "Seconds per create")
      ->capture_default_str();
  app->add_option("--delete-s", d.delete_s, "Seconds per delete")
      ->capture_default_str();
  app->add_option("--local-migrate-s", d.local_migrate_s,
                  "Seconds per migrate within a node")
      ->capture_default_str();
  app->add_option("--remote-migrate-s", d.remote_migrate_s,
                  "Seconds per migrate across nodes")
      ->capture_default_str();
  app->add_option("--repartition-s", d.repartition_s,
                  "Seconds per partial repartition")
      ->capture_default_str();
  app->add_option("--claim-s", d.claim_s,
                  "Price repartitions as Kubernetes DRA makes them: seconds "
                  "per instance a repartition adds, one claim after another "
                  "(0: --repartition-s per repartition, the node agent's)")
      ->capture_default_str();
  app->add_option("--jitter", d.jitter, "Durations vary by +-this share")
      ->capture_default_str();
  app->add_option("--fail-action", flags->faults.fail_action,
                  "Inject: the action with this id fails (an id of the plan)")
      ->check(NonNegative());
  CLI::Option* lose_gpu = app->add_option(
      "--lose-gpu", flags->lose_gpu,
      "Inject: this GPU (NODE/INDEX; a GPU of a deployment without nodes is "
      "node-<id / 8>/<id % 8>) is lost at --lose-at seconds");
  CLI::Option* lose_at =
      app->add_option("--lose-at", flags->faults.lose_at_s,
                      "Inject: when --lose-gpu is lost (seconds)")
          ->check(NonNegative());
  lose_gpu->needs(lose_at);
  lose_at->needs(lose_gpu);
  OnRun(app, context,
        [flags, context] { return RunSimulate(*flags, context); });
}

}  // namespace migserve::cli
