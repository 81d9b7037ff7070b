#include "controller/transition_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "controller/target_mapping.h"
#include "optimizer/registry.h"

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::GpuId;
using cluster::GpuState;
using deployment::GpuConfig;
using deployment::kIdle;

// Returns the current GPUs as the optimizer sees them: each layout with the
// services whose replicas may be kept, credited with the lower of what they
// are credited with now and what the workload credits a new one with.
StatusOr<std::vector<optimizer::CurrentGpu>> KeepableConfigs(
    const ClusterState& current, const optimizer::Problem& problem) {
  std::vector<optimizer::CurrentGpu> configs;
  for (const GpuState& g : current.gpus) {
    if (g.model->name != problem.gpu.name) {
      return Status::InvalidArgument(fmt::format(
          "--from: GPU {} is {}; the workload plans for {} GPUs only",
          g.id.ToString(), g.model->name, problem.gpu.name));
    }
    GpuConfig config{g.layout(), {}};
    config.services.assign(config.layout.size(), kIdle);
    std::vector<double> throughput(config.layout.size(), 0.0);
    const auto& instances = config.layout.instances();
    for (const cluster::Slot& slot : g.slots) {
      if (!slot.replica) continue;
      const cluster::Replica& have = *slot.replica;
      const auto& services = problem.workload.services;
      auto it = std::find_if(
          services.begin(), services.end(),
          [&](const workload::Service& s) { return s.name == have.service; });
      if (it == services.end()) continue;
      int j = static_cast<int>(it - services.begin());
      int p = slot.instance.profile;
      if (problem.caps.row(j, p) == nullptr) continue;
      const profile::ProfileRow& row = *problem.caps.row(j, p);
      if (have.batch != row.batch || have.procs != row.procs ||
          (!have.model.empty() && have.model != it->model)) {
        continue;
      }
      size_t i = std::find(instances.begin(), instances.end(), slot.instance) -
                 instances.begin();
      config.services[i] = j;
      throughput[i] = std::min(have.throughput, problem.caps.throughput(j, p));
    }
    configs.push_back({std::move(config), std::move(throughput)});
  }
  return configs;
}

// Returns where each config of `solved` goes in `current` (extended by new
// GPUs as needed, added to `current`).
std::vector<GpuId> Place(const optimizer::TransitionSolution& solved,
                         int gpus_per_node, ClusterState* current) {
  std::vector<GpuId> where(solved.configs.size());
  std::vector<bool> taken(current->gpus.size(), false);
  for (size_t c = 0; c < solved.configs.size(); ++c) {
    if (solved.from[c] < 0) continue;
    where[c] = current->gpus[solved.from[c]].id;
    taken[solved.from[c]] = true;
  }
  std::set<GpuId> names;
  for (const GpuState& g : current->gpus) names.insert(g.id);
  int next_name = 0;
  for (size_t c = 0; c < solved.configs.size(); ++c) {
    if (solved.from[c] >= 0) continue;
    // Idle GPUs first, with the config's layout first; then GPUs whose
    // replicas all go.
    std::optional<size_t> best;
    auto rank = [&](size_t g) {
      const GpuState& gpu = current->gpus[g];
      return std::pair{gpu.HasReplica(),
                       gpu.layout() != solved.configs[c].layout};
    };
    for (size_t g = 0; g < current->gpus.size(); ++g) {
      if (!taken[g] && (!best || rank(g) < rank(*best))) best = g;
    }
    if (best) {
      taken[*best] = true;
      where[c] = current->gpus[*best].id;
      continue;
    }
    GpuId id;
    do {
      id = cluster::UnplacedGpuId(next_name++, gpus_per_node);
    } while (names.count(id) > 0);
    names.insert(id);
    where[c] = id;
    current->gpus.push_back({id, current->gpus.front().model, {}});
    taken.push_back(true);
  }
  return where;
}

nlohmann::json CostJson(const optimizer::TransitionCost& cost) {
  return {{"gpus", cost.gpus},
          {"pod_starts", cost.pod_starts},
          {"repartitioned_gpus", cost.repartitioned_gpus},
          {"kept_replicas", cost.kept_replicas}};
}

}  // namespace

StatusOr<optimizer::TransitionCost> CostOfTransition(
    const ClusterState& current, const deployment::Deployment& target) {
  MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts desired, MapTarget(current, target));
  optimizer::TransitionCost cost;
  for (const auto& [id, slots] : desired) {
    const GpuState& have = *current.FindGpu(id);
    ++cost.gpus;
    std::vector<mig::Instance> instances;
    for (const cluster::Slot& s : slots) instances.push_back(s.instance);
    if (mig::Layout(instances) != have.layout()) ++cost.repartitioned_gpus;
    for (const cluster::Slot& s : slots) {
      if (!s.replica) continue;
      const cluster::Slot* there = have.Find(s.instance);
      if (there != nullptr && there->replica &&
          there->replica->Covers(*s.replica)) {
        ++cost.kept_replicas;
      } else {
        ++cost.pod_starts;
      }
    }
  }
  return cost;
}

StatusOr<deployment::Deployment> OptimizeFromCurrent(
    const ClusterState& current, const optimizer::Problem& problem,
    const optimizer::SolveOptions& options,
    const optimizer::TransitionOptions& transition, int gpus_per_node) {
  MIGSERVE_RETURN_IF_ERROR(transition.Validate());
  auto begin = std::chrono::steady_clock::now();
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<optimizer::CurrentGpu> keepable,
                            KeepableConfigs(current, problem));
  optimizer::TransitionSolution solved =
      optimizer::SolveTransition(problem, keepable, options, transition);
  if (solved.outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition("milp: " + solved.reason);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  ClusterState room = current;
  std::vector<GpuId> where = Place(solved, gpus_per_node, &room);
  deployment::Deployment target = deployment::MakeDeployment(
      problem.workload, problem.gpu, problem.caps, solved.configs);
  for (size_t c = 0; c < target.gpus.size(); ++c) {
    target.gpus[c].node = where[c].node;
    target.gpus[c].index = where[c].index;
    // A kept replica counts with what the optimizer credited it with.
    for (size_t i = 0; i < solved.kept[c].size(); ++i) {
      if (solved.kept[c][i]) {
        target.gpus[c].instances[i].throughput =
            keepable[solved.from[c]].throughput[i];
      }
    }
  }
  std::sort(
      target.gpus.begin(), target.gpus.end(),
      [](const deployment::DeployedGpu& a, const deployment::DeployedGpu& b) {
        return std::tie(*a.node, *a.index) < std::tie(*b.node, *b.index);
      });
  for (size_t c = 0; c < target.gpus.size(); ++c) {
    target.gpus[c].id = static_cast<int>(c);
  }
  room.Sort();
  MIGSERVE_ASSIGN_OR_RETURN(optimizer::TransitionCost cost,
                            CostOfTransition(room, target));
  deployment::Deployment plain = deployment::MakeDeployment(
      problem.workload, problem.gpu, problem.caps, solved.plain.configs);
  MIGSERVE_ASSIGN_OR_RETURN(optimizer::TransitionCost plain_cost,
                            CostOfTransition(room, plain));
  optimizer::Solution solution = solved.plain;
  solution.outcome = solved.outcome;
  solution.configs = solved.configs;
  deployment::Summary summary =
      optimizer::SummaryOf("milp", problem, solution, seconds);
  nlohmann::json& extra = summary.extra;
  extra["pod_starts"] = cost.pod_starts;
  extra["repartitioned_gpus"] = cost.repartitioned_gpus;
  extra["kept_replicas"] = cost.kept_replicas;
  extra["starts_bound"] = solved.starts_bound;
  extra["extra_gpus"] = transition.extra_gpus;
  extra["transition_nodes"] = solved.nodes;
  extra["plain_optimum"] = CostJson(plain_cost);
  target.summary = std::move(summary);
  return target;
}

}  // namespace migserve::controller
