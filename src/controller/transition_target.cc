#include "controller/transition_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>

#include "controller/target_mapping.h"
#include "optimizer/registry.h"
#include "profile/capacity.h"
#include "queueing/capacity_model.h"

namespace migserve::controller {
namespace {

using cluster::ClusterState;
using cluster::GpuId;
using cluster::GpuState;
using deployment::GpuConfig;
using deployment::kIdle;

// Returns what a replica `have` of service `j` on `profile` is credited with
// under the workload: the capacity of its own measured point (its batch and
// processes) at the service's new rate, at most what it is credited with now
// (so that the planner keeps it); 0 if that point may not serve the service.
double KeptCredit(const optimizer::Problem& problem,
                  const profile::ProfileTable& profiles,
                  const cluster::Replica& have, int j, int profile) {
  const workload::Service& service = problem.workload.services[j];
  const std::string& model = have.model.empty() ? service.model : have.model;
  const mig::Profile& p = problem.gpu.profiles[profile];
  queueing::ServiceTerms terms = problem.workload.TermsOf(service);
  for (const profile::ProfileRow& row : profiles.rows) {
    if (row.model == model && row.gpu == problem.gpu.name &&
        row.profile == p.name && row.batch == have.batch &&
        row.procs == have.procs && problem.workload.mig.Enabled(p) &&
        profile::RowFits(row, p, terms.limits)) {
      return std::min(have.credit, queueing::RowCapacity(profiles, row, terms));
    }
  }
  return 0;
}

// Returns the current GPUs as the optimizer sees them: each layout with the
// services whose replicas may be kept and their credit (KeptCredit).
StatusOr<std::vector<optimizer::milp::CurrentGpu>> KeepableConfigs(
    const ClusterState& current, const optimizer::Problem& problem,
    const profile::ProfileTable& profiles) {
  std::vector<optimizer::milp::CurrentGpu> configs;
  const auto& services = problem.workload.services;
  for (const GpuState& g : current.gpus) {
    if (g.model->name != problem.gpu.name) {
      return Status::InvalidArgument(fmt::format(
          "--from: GPU {} is {}; the workload plans for {} GPUs only",
          g.id.ToString(), g.model->name, problem.gpu.name));
    }
    optimizer::milp::CurrentGpu config{{g.layout(), {}}, {}};
    const auto& instances = config.config.layout.instances();
    config.config.services.assign(instances.size(), kIdle);
    config.throughput.assign(instances.size(), 0.0);
    for (const cluster::Slot& slot : g.slots) {
      if (!slot.replica) continue;
      auto it = std::find_if(services.begin(), services.end(),
                             [&](const workload::Service& s) {
                               return s.name == slot.replica->service;
                             });
      if (it == services.end()) continue;
      int j = static_cast<int>(it - services.begin());
      double credit = KeptCredit(problem, profiles, *slot.replica, j,
                                 slot.instance.profile);
      if (credit <= 0) continue;
      size_t i = std::find(instances.begin(), instances.end(), slot.instance) -
                 instances.begin();
      config.config.services[i] = j;
      config.throughput[i] = credit;
    }
    configs.push_back(std::move(config));
  }
  return configs;
}

// Returns where each config of `solved` goes in `current` (extended by new
// GPUs as needed, added to `current`). While the GPUs the move holds stay
// within the budget, a new config goes to an idle GPU first (the move
// creates it before anything goes); past it, to a GPU whose replicas all
// go (the move deletes them first). A new GPU is of `model` (the
// problem's: `current` may have no GPU at all, a target emptied by hand).
std::vector<GpuId> Place(const optimizer::milp::TransitionSolution& solved,
                         const mig::GpuModel& model,
                         const TargetPlacement& placement,
                         ClusterState* current) {
  std::vector<GpuId> where(solved.configs.size());
  std::vector<bool> taken(current->gpus.size(), false);
  std::set<GpuId> names;
  int held = 0;  // serving now, or kept from an idle GPU to serve
  for (const GpuState& g : current->gpus) {
    names.insert(g.id);
    held += g.HasReplica() ? 1 : 0;
  }
  for (size_t c = 0; c < solved.configs.size(); ++c) {
    if (solved.from[c] < 0) continue;
    const GpuState& kept = current->gpus[solved.from[c]];
    where[c] = kept.id;
    taken[solved.from[c]] = true;
    held += kept.HasReplica() ? 0 : 1;
  }
  int slack = placement.max_gpus_held > 0 ? placement.max_gpus_held - held
                                          : std::numeric_limits<int>::max();
  int next_name = 0;
  for (size_t c = 0; c < solved.configs.size(); ++c) {
    if (solved.from[c] >= 0) continue;
    // Idle GPUs first while the budget has room, else GPUs whose replicas
    // all go; those with the config's layout first.
    std::optional<size_t> best;
    auto rank = [&](size_t g) {
      const GpuState& gpu = current->gpus[g];
      return std::pair{gpu.HasReplica() == (slack > 0),
                       gpu.layout() != solved.configs[c].layout};
    };
    for (size_t g = 0; g < current->gpus.size(); ++g) {
      if (!taken[g] && (!best || rank(g) < rank(*best))) best = g;
    }
    if (best) {
      taken[*best] = true;
      where[c] = current->gpus[*best].id;
      slack -= current->gpus[*best].HasReplica() ? 0 : 1;
      continue;
    }
    --slack;
    GpuId id;
    do {
      id = cluster::UnplacedGpuId(next_name++, placement.gpus_per_node);
    } while (names.count(id) > 0);
    names.insert(id);
    where[c] = id;
    current->gpus.push_back({id, &model, {}});
    taken.push_back(true);
  }
  return where;
}

// Keeping an idle GPU's layout saves a repartition but holds one more
// GPU: past the room `max_gpus_held` leaves beside the serving GPUs, idle
// GPUs count as unpartitioned in `keepable` (per GPU of `current`).
void KeepIdleLayoutsWithin(const ClusterState& current, int max_gpus_held,
                           std::vector<optimizer::milp::CurrentGpu>* keepable) {
  int room = max_gpus_held - current.UsedGpus();
  for (size_t g = 0; g < current.gpus.size(); ++g) {
    if (current.gpus[g].HasReplica() || (*keepable)[g].config.layout.empty()) {
      continue;
    }
    if (room > 0) {
      --room;
    } else {
      (*keepable)[g] = {};
    }
  }
}

// survive: {domain: node}'s failure domains from `current`: its nodes
// with GPUs of `gpu`, in order, then spare nodes of `gpus_per_node` named
// as new GPUs' nodes are (node-<k>, not in the cluster), enough for four
// times the cluster and 64 GPUs more, used only for what the cluster's
// nodes cannot hold.
std::vector<optimizer::FleetNode> ClusterNodes(const ClusterState& current,
                                               const mig::GpuModel& gpu,
                                               int gpus_per_node) {
  std::vector<optimizer::FleetNode> nodes;
  std::set<std::string> names;
  for (const GpuState& g : current.gpus) {
    names.insert(g.id.node);
    if (g.model->name != gpu.name) continue;  // as KeepableConfigs compares
    if (nodes.empty() || nodes.back().name != g.id.node) {
      nodes.push_back({g.id.node, 0, false});
    }
    ++nodes.back().gpus;
  }
  int spare_gpus = 4 * static_cast<int>(current.gpus.size()) + 64;
  for (int k = 0; spare_gpus > 0; ++k) {
    std::string name =
        deployment::UnplacedNode(k * gpus_per_node, gpus_per_node);
    if (names.count(name) > 0) continue;
    nodes.push_back({name, gpus_per_node, true});
    spare_gpus -= gpus_per_node;
  }
  return nodes;
}

// The placed target the planner maps onto `desired` (every GPU of
// `problem`'s model), carrying the workload's survive.
deployment::Deployment TargetAt(const optimizer::Problem& problem,
                                DesiredLayouts desired) {
  ClusterState placed;
  for (auto& [id, slots] : desired) {
    placed.gpus.push_back({id, &problem.gpu, std::move(slots)});
  }
  deployment::Deployment target =
      cluster::ToDeployment(placed, problem.workload.services);
  target.survive = problem.workload.survive;
  return target;
}

// The configs of `solved` placed each on its node (solved.node_of): per
// node, as the planner maps a target onto that node's GPUs of `current`
// (keeping the replicas it can), new GPUs of the node added to `current`
// where it has too few.
StatusOr<deployment::Deployment> PlaceByNode(
    const optimizer::Problem& problem,
    const optimizer::milp::TransitionSolution& solved, ClusterState* current) {
  std::map<std::string, std::vector<deployment::GpuConfig>> configs_of;
  for (size_t c = 0; c < solved.configs.size(); ++c) {
    configs_of[solved.node_of[c]].push_back(solved.configs[c]);
  }
  DesiredLayouts all;
  for (const auto& [node, configs] : configs_of) {
    ClusterState here;
    int next = 0;
    for (const GpuState& g : current->gpus) {
      if (g.id.node != node) continue;
      here.gpus.push_back(g);
      next = std::max(next, g.id.index + 1);
    }
    while (here.gpus.size() < configs.size()) {
      GpuState fresh{{node, next++}, &problem.gpu, {}};
      here.gpus.push_back(fresh);
      current->gpus.push_back(std::move(fresh));
    }
    MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts desired,
                              MapTarget(here, deployment::MakeDeployment(
                                                  problem.workload, problem.gpu,
                                                  problem.caps, configs)));
    all.merge(desired);
  }
  return TargetAt(problem, std::move(all));
}

// What moving `current` to the GPUs and slots `desired` takes
// (CostOfTransition).
deployment::TransitionCost CostOf(const ClusterState& current,
                                  const DesiredLayouts& desired) {
  deployment::TransitionCost cost;
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

}  // namespace

StatusOr<deployment::TransitionCost> CostOfTransition(
    const ClusterState& current, const deployment::Deployment& target) {
  MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts desired, MapTarget(current, target));
  return CostOf(current, desired);
}

// Puts each config of `target` (solved's, in its order) on the GPU `where`
// names (none: placed already), each replica `solved` keeps as it is, with
// what the optimizer credited it with; then sorts the GPUs by node and
// index and numbers them.
void PutWhere(const std::vector<GpuId>& where,
              const optimizer::milp::TransitionSolution& solved,
              const ClusterState& current,
              const std::vector<optimizer::milp::CurrentGpu>& keepable,
              deployment::Deployment* out) {
  deployment::Deployment& target = *out;
  for (size_t c = 0; c < where.size(); ++c) {
    target.gpus[c].node = where[c].node;
    target.gpus[c].index = where[c].index;
    // A kept replica stays as it is, with what the optimizer credited it
    // with.
    for (size_t i = 0; i < solved.kept[c].size(); ++i) {
      if (!solved.kept[c][i]) continue;
      const GpuState& was = current.gpus[solved.from[c]];
      const cluster::Replica& have =
          *was.Find(solved.configs[c].layout.instances()[i])->replica;
      deployment::PlacedInstance& kept = target.gpus[c].instances[i];
      kept.batch = have.batch;
      kept.procs = have.procs;
      kept.latency_ms = have.latency_ms;
      kept.credit = keepable[solved.from[c]].throughput[i];
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
}

StatusOr<deployment::Deployment> OptimizeFromCurrent(
    const ClusterState& current, const optimizer::Problem& problem,
    const profile::ProfileTable& profiles,
    const optimizer::SolveOptions& options,
    const optimizer::milp::TransitionOptions& transition,
    const TargetPlacement& placement) {
  MIGSERVE_RETURN_IF_ERROR(transition.Validate());
  auto begin = std::chrono::steady_clock::now();
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<optimizer::milp::CurrentGpu> keepable,
                            KeepableConfigs(current, problem, profiles));
  if (placement.max_gpus_held > 0) {
    KeepIdleLayoutsWithin(current, placement.max_gpus_held, &keepable);
  }
  optimizer::SolveOptions solve = options;
  if (problem.workload.survive &&
      problem.workload.survive->domain == workload::FailureDomain::kNode) {
    solve.nodes = ClusterNodes(current, problem.gpu, placement.gpus_per_node);
  }
  optimizer::milp::TransitionSolution solved =
      optimizer::milp::SolveTransition(problem, keepable, solve, transition);
  if (solved.outcome == optimizer::Outcome::kInfeasible) {
    return Status::FailedPrecondition("milp: " + solved.reason);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  ClusterState room = current;
  deployment::Deployment target;
  std::vector<GpuId> where;  // per config, where Place put it
  if (!solved.node_of.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(target, PlaceByNode(problem, solved, &room));
  } else {
    where = Place(solved, problem.gpu, placement, &room);
    target = deployment::MakeDeployment(problem.workload, problem.gpu,
                                        problem.caps, solved.configs);
  }
  PutWhere(where, solved, current, keepable, &target);
  room.Sort();
  MIGSERVE_ASSIGN_OR_RETURN(deployment::TransitionCost cost,
                            CostOfTransition(room, target));
  deployment::Deployment plain = deployment::MakeDeployment(
      problem.workload, problem.gpu, problem.caps, solved.plain.configs);
  MIGSERVE_ASSIGN_OR_RETURN(DesiredLayouts plain_desired,
                            MapTarget(room, plain));
  deployment::TransitionCost plain_cost = CostOf(room, plain_desired);
  // The model keeps a GPU's whole layout or none of it; the planner also
  // keeps replicas on GPUs it repartitions in part. Where that keeps more,
  // the plain optimum as the planner places it is the better target (not
  // where each config must stay on its node: the planner ignores nodes).
  // Nor where it holds more GPUs than the budget while it runs.
  bool plain_better =
      solved.node_of.empty() &&
      std::pair{plain_cost.pod_starts, plain_cost.repartitioned_gpus} <
          std::pair{cost.pod_starts, cost.repartitioned_gpus};
  if (plain_better) {
    deployment::Deployment plain_target =
        TargetAt(problem, std::move(plain_desired));
    plain_better = placement.max_gpus_held <= 0 ||
                   GpusHeld(room, plain_target) <= placement.max_gpus_held;
    if (plain_better) {
      target = std::move(plain_target);
      cost = plain_cost;
    }
  }
  optimizer::Solution solution = solved.plain;
  solution.outcome = solved.outcome;
  if (!plain_better) solution.configs = solved.configs;
  deployment::Summary summary =
      optimizer::SummaryOf("milp", problem, solution, seconds);
  deployment::TransitionSummary& moved = summary.transition.emplace();
  moved.cost = cost;
  moved.plain_optimum = plain_cost;
  moved.plain_placed = plain_better;
  moved.starts_bound = solved.starts_bound;
  moved.extra_gpus = transition.extra_gpus;
  moved.nodes = solved.nodes;
  target.summary = std::move(summary);
  return target;
}

int GpusHeld(const ClusterState& current,
             const deployment::Deployment& target) {
  std::set<GpuId> held;
  for (const GpuState& g : current.gpus) {
    if (g.HasReplica()) held.insert(g.id);
  }
  int unplaced = 0;
  for (const deployment::DeployedGpu& g : target.gpus) {
    if (!g.Serving()) continue;
    if (g.node && g.index) {
      held.insert({*g.node, *g.index});
    } else {
      ++unplaced;
    }
  }
  return static_cast<int>(held.size()) + unplaced;
}

}  // namespace migserve::controller
