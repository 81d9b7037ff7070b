// migserve simulate --from D1 --to D2 [--spare-gpus K] [--seed N] [...]
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "cli/transition_inputs.h"
#include "cluster/apply.h"
#include "cluster/simulated_cluster.h"
#include "controller/controller.h"
#include "deployment/deployment_json.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/tolerance.h"

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

// Seconds of the makespan during which a repartition ran, and during which
// only replica actions (create, delete, migrate) ran: the paper's split of
// a transition's time by component (fig:e2estack).
std::pair<double, double> TimeByComponent(
    const std::vector<cluster::TimelineEntry>& timeline) {
  std::vector<double> cuts;
  for (const auto& e : timeline) {
    cuts.push_back(e.start_s);
    cuts.push_back(e.end_s);
  }
  std::sort(cuts.begin(), cuts.end());
  double repartition = 0, replicas = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    double mid = (cuts[k] + cuts[k + 1]) / 2;
    bool any = false, gpu = false;
    for (const auto& e : timeline) {
      if (e.start_s <= mid && mid < e.end_s) {
        any = true;
        gpu |= e.action.kind == cluster::ActionKind::kRepartition;
      }
    }
    double width = cuts[k + 1] - cuts[k];
    if (gpu) {
      repartition += width;
    } else if (any) {
      replicas += width;
    }
  }
  return {repartition, replicas};
}

// Every action as it ran: kind, GPU(s), service, start and end.
nlohmann::json TimelineJson(
    const std::vector<cluster::TimelineEntry>& timeline) {
  nlohmann::json entries = nlohmann::json::array();
  for (const cluster::TimelineEntry& e : timeline) {
    const cluster::Action& a = e.action;
    nlohmann::json j = {{"id", a.id},
                        {"kind", cluster::KindName(a.kind)},
                        {"gpu", a.at.gpu.ToString()},
                        {"start_s", e.start_s},
                        {"end_s", e.end_s},
                        {"ok", e.ok},
                        {"text", cluster::Describe(a)}};
    if (a.kind != cluster::ActionKind::kRepartition) {
      j["service"] = a.replica.service;
      j["profile"] = a.at.model->profiles.at(a.at.instance.profile).name;
      j["start"] = a.at.instance.start;
    }
    if (a.kind == cluster::ActionKind::kMigrate) {
      j["to"] = a.to.gpu.ToString();
      j["to_start"] = a.to.instance.start;
      j["local"] = e.local;
    }
    entries.push_back(std::move(j));
  }
  return entries;
}

nlohmann::json CapacityHistoryJson(
    const std::vector<cluster::CapacitySample>& history) {
  nlohmann::json samples = nlohmann::json::array();
  for (const cluster::CapacitySample& c : history) {
    samples.push_back({{"time_s", c.time_s}, {"capacity", c.capacity}});
  }
  return samples;
}

void RunSimulate(const SimulateFlags& flags, CommandContext* context) {
  auto in = LoadTransition(flags.transition);
  Status valid = flags.durations.Validate();
  if (!in.ok() || !valid.ok()) {
    context->Fail(in.ok() ? valid : in.status());
    return;
  }
  auto journal = controller::Journal::Open(flags.journal);
  if (!journal.ok()) {
    context->Fail(journal.status());
    return;
  }
  cluster::Faults faults = flags.faults;
  if (!flags.lose_gpu.empty()) {
    faults.lose_gpu = cluster::ParseGpuId(flags.lose_gpu);
    int id = 0;
    if (!faults.lose_gpu && ParseInt(flags.lose_gpu, &id) && id >= 0) {
      faults.lose_gpu =
          cluster::UnplacedGpuId(id, flags.transition.gpus_per_node);
    }
    if (!faults.lose_gpu) {
      context->Fail(Status::InvalidArgument(
          fmt::format("--lose-gpu: \"{}\" is not NODE/INDEX (node-1/2, say)",
                      flags.lose_gpu)));
      return;
    }
    if (in->current.FindGpu(*faults.lose_gpu) == nullptr) {
      context->Fail(Status::InvalidArgument(fmt::format(
          "--lose-gpu: the cluster has no GPU {} (it has {} GPUs, {} to {})",
          faults.lose_gpu->ToString(), in->current.gpus.size(),
          in->current.gpus.front().id.ToString(),
          in->current.gpus.back().id.ToString())));
      return;
    }
  }
  cluster::SimulatedCluster sim(in->current, flags.durations, flags.seed,
                                faults);
  controller::ControllerOptions options;
  options.planner = in->planner;
  options.progress = [context](const std::string& line) {
    context->err << line << "\n";
  };
  controller::Controller controller(&sim, journal->get(), options);
  Status run = controller.Transition(in->to, in->goal);

  if (flags.faults.fail_action >= 0 &&
      std::none_of(sim.timeline().begin(), sim.timeline().end(),
                   [&](const cluster::TimelineEntry& e) {
                     return e.action.id == flags.faults.fail_action;
                   })) {
    context->Fail(Status::InvalidArgument(fmt::format(
        "--fail-action: the transition ran no action {} (it ran {} actions; "
        "`plan --format text` lists their ids)",
        flags.faults.fail_action, sim.timeline().size())));
    return;
  }
  std::map<std::string, int> counts;
  for (const auto& e : sim.timeline()) {
    if (!e.ok) continue;
    std::string kind(cluster::KindName(e.action.kind));
    if (e.action.kind == cluster::ActionKind::kMigrate) {
      kind = e.local ? "local migrate" : "remote migrate";
    }
    ++counts[kind];
  }
  auto [repartition_s, replicas_s] = TimeByComponent(sim.timeline());
  cluster::ClusterState end = sim.state();
  std::map<std::string, double> final_capacity = end.Capacity();

  nlohmann::json report = {
      {"from", flags.transition.from},
      {"to", flags.transition.to},
      {"seed", flags.seed},
      {"actions", counts},
      {"makespan_s", sim.now_s()},
      {"time_s",
       {{"planner", controller.stats().planner_s},
        {"repartition", repartition_s},
        {"replicas", replicas_s}}},
      {"peak_gpus", sim.peak_gpus()},
      {"plans", controller.stats().plans},
      {"final_gpus", end.UsedGpus()},
      {"target_gpus", in->goal.target_gpus},
      {"services", nlohmann::json::array()},
      {"timeline", TimelineJson(sim.timeline())},
      {"capacity_history", CapacityHistoryJson(sim.capacity_history())}};
  // The verdict comes from the capacity the cluster measured at every
  // change, never from the plan: a service is short when its lowest
  // capacity fell below its floor, whatever the controller believed.
  std::vector<std::string> problems, short_services;
  if (!run.ok()) problems.push_back(run.message());
  TextTable table(
      {"service", "floor", "lowest", "min satisfaction", "final", "required"});
  for (const auto& [service, lowest] : sim.min_capacity()) {
    double floor = in->goal.Floor(service);
    double required = in->goal.required_after.count(service) > 0
                          ? in->goal.required_after.at(service)
                          : 0;
    double satisfaction = floor > 0 ? lowest / floor : 1;
    if (satisfaction < 1 - kRateTolerance) {
      short_services.push_back(service);
      problems.push_back(fmt::format("service {} dropped to {:.1f}% of {:.6g}",
                                     service, 100 * satisfaction, floor));
    }
    report["services"].push_back({{"name", service},
                                  {"floor", floor},
                                  {"lowest", lowest},
                                  {"min_satisfaction", satisfaction},
                                  {"final", final_capacity[service]},
                                  {"required", required}});
    table.AddRow({service, fmt::format("{:.6g}", floor),
                  fmt::format("{:.6g}", lowest),
                  fmt::format("{:.1f}%", 100 * satisfaction),
                  fmt::format("{:.6g}", final_capacity[service]),
                  fmt::format("{:.6g}", required)});
  }
  for (std::string& p : controller::EndStateProblems(end, in->goal)) {
    problems.push_back(std::move(p));
  }
  report["problems"] = problems;
  report["short_services"] = short_services;
  report["ok"] = problems.empty();

  std::ostream& out = context->out;
  out << fmt::format(
      "actions: {} create, {} delete, {} local migrate, {} remote migrate, "
      "{} repartition\n",
      counts["create"], counts["delete"], counts["local migrate"],
      counts["remote migrate"], counts["repartition"]);
  out << fmt::format(
      "makespan: {:.1f} s (repartition {:.1f} s, replicas only {:.1f} s; "
      "planner {:.1f} ms)\n",
      sim.now_s(), repartition_s, replicas_s,
      1000 * controller.stats().planner_s);
  out << fmt::format("gpus: peak {}, final {}, target {}\n", sim.peak_gpus(),
                     end.UsedGpus(), in->goal.target_gpus);
  table.Print(out);
  for (const auto& [path, text] :
       {std::pair{flags.report, report.dump(2) + "\n"},
        std::pair{flags.before,
                  flags.before.empty()
                      ? ""
                      : deployment::FormatDeployment(cluster::ToDeployment(
                            in->current, in->from.services))},
        std::pair{flags.after,
                  flags.after.empty()
                      ? ""
                      : deployment::FormatDeployment(
                            cluster::ToDeployment(end, in->to.services))}}) {
    if (path.empty()) continue;
    Status written = WriteFileAtomic(path, text);
    if (!written.ok()) {
      context->Fail(written);
      return;
    }
  }
  if (problems.empty()) {
    out << "no drop: every service stayed at >= 100% of min(before, after)\n";
    return;
  }
  for (const std::string& p : problems)
    context->err << "migserve: " << p << "\n";
  context->exit_code =
      run.ok() || run.code() == Status::Code::kFailedPrecondition
          ? kExitNo
          : kExitBadInput;
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
  app->callback([flags, context] { RunSimulate(*flags, context); });
}

}  // namespace migserve::cli
