#include "optimizer/fleet.h"

#include <fmt/format.h>

#include <deque>
#include <optional>

#include "mig/gpu_catalog.h"
#include "optimizer/deadline.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/registry.h"
#include "optimizer/survive.h"

namespace migserve::optimizer {
namespace {

// What SolveFleetToSurvive found: the last round's fleet, its services
// spread over the failure domains of each type; its cost bound the first
// round's.
struct SurvivingFleet {
  milp::FleetSolution solution;
  std::vector<FailureDomains> domains;  // per type
  int rounds = 0;
};

// The failure domains of each type's configs. Over GPUs, each its own,
// numbered across the types in order as RunFleet numbers them. Over nodes,
// a node holds GPUs of one type: the fleet's nodes of the type
// (FailureDomainsOf), else nodes of deployment::kUnplacedGpusPerNode,
// node-<k> numbered on from the previous type's.
StatusOr<std::vector<FailureDomains>> FleetDomains(
    const std::vector<milp::FleetType>& types,
    const milp::FleetSolution& solution, workload::FailureDomain domain,
    const std::vector<FleetNode>& nodes) {
  std::vector<FailureDomains> out(types.size());
  int next = 0;  // the next GPU, or unplaced node
  for (size_t t = 0; t < types.size(); ++t) {
    const int count = static_cast<int>(solution.configs[t].size());
    FailureDomains& d = out[t];
    d.domain = domain;
    if (domain == workload::FailureDomain::kGpu) {
      for (int g = 0; g < count; ++g) d.of.push_back(next++);
      continue;
    }
    if (!nodes.empty()) {
      const std::string& model = types[t].problem->gpu.name;
      std::vector<FleetNode> of_type;
      for (const FleetNode& n : nodes) {
        if (n.model == model) of_type.push_back(n);
      }
      MIGSERVE_ASSIGN_OR_RETURN(d, FailureDomainsOf(count, domain, of_type));
      continue;
    }
    const int per_node = deployment::kUnplacedGpusPerNode;
    for (int g = 0; g < count; ++g) {
      if (g % per_node == 0) {
        d.nodes.push_back(deployment::UnplacedNode(next++, 1));
      }
      d.of.push_back(g / per_node);
      d.index.push_back(g % per_node);
    }
  }
  return out;
}

// SolveToSurvive for a mixed fleet: each round solves the fleet for the
// raised rates (SurviveRounds) and checks the loss of each failure domain
// (FleetDomains). The first round's cost bound holds for every fleet that
// survives.
SurvivingFleet SolveFleetToSurvive(const workload::Workload& workload,
                                   const std::vector<milp::FleetType>& types,
                                   const SolveOptions& options) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  std::vector<const workload::CapacityMatrix*> caps;
  for (const milp::FleetType& t : types) caps.push_back(&t.problem->caps);
  SurviveRounds rounds(workload, caps);
  SurvivingFleet out;
  std::optional<double> bound;
  while (true) {
    out.rounds = rounds.round();
    // Problems refer to their matrix: keep the raised ones in place.
    std::deque<workload::CapacityMatrix> raised;
    std::deque<Problem> problems;
    std::vector<milp::FleetType> round;
    for (const milp::FleetType& t : types) {
      raised.push_back(t.problem->caps.WithRequired(rounds.required()));
      problems.emplace_back(t.problem->workload, t.problem->gpu, raised.back());
      round.push_back({&problems.back(), t.cost});
    }
    SolveOptions limited = options;
    limited.time_limit_s = std::max(SecondsLeft(deadline), 0.0);
    if (bound) {
      double cheapest = types.front().cost;
      for (const milp::FleetType& t : types)
        cheapest = std::min(cheapest, t.cost);
      limited.milp.gap =
          SurviveRounds::RepairGap(options.milp.gap, *bound, cheapest);
    }
    out.solution = milp::SolveFleet(
        round, deployment::CompletionRates(workload.services.size(), 0.0),
        limited);
    if (out.solution.outcome == Outcome::kInfeasible) return out;
    if (!bound) bound = out.solution.info.cost_bound;
    out.solution.info.cost_bound = bound;
    if (out.solution.outcome == Outcome::kOptimal &&
        out.solution.info.cost.value_or(0) > bound.value_or(0) + 1e-9) {
      out.solution.outcome = Outcome::kFeasible;
    }
    StatusOr<std::vector<FailureDomains>> domains = FleetDomains(
        types, out.solution, workload.survive->domain, options.nodes);
    if (!domains.ok()) {
      out.solution.outcome = Outcome::kInfeasible;
      out.solution.reason = domains.status().message();
      return out;
    }
    out.domains = *std::move(domains);
    std::vector<SurviveRounds::Part> parts;
    for (size_t t = 0; t < types.size(); ++t) {
      parts.push_back({caps[t], &out.solution.configs[t], &out.domains[t]});
    }
    std::string short_of = rounds.Check(parts);
    if (short_of.empty()) return out;
    if (std::string end = rounds.Next(short_of, deadline, options);
        !end.empty()) {
      out.solution.outcome = Outcome::kInfeasible;
      out.solution.reason = end;
      return out;
    }
  }
}

}  // namespace

StatusOr<RunResult> RunFleet(const workload::Workload& workload,
                             const profile::ProfileTable& profiles,
                             const SolveOptions& options) {
  MIGSERVE_RETURN_IF_ERROR(options.Validate());
  Clock::time_point begin = Clock::now();
  // Problems refer to their workload, GPU and matrix: keep them in place.
  std::deque<workload::Workload> workloads;
  std::deque<workload::CapacityMatrix> caps;
  std::deque<Problem> problems;
  std::vector<milp::FleetType> types;
  std::vector<const mig::GpuModel*> gpus;
  for (const workload::GpuOffer& offer : workload.offers) {
    MIGSERVE_ASSIGN_OR_RETURN(const mig::GpuModel* gpu,
                              mig::GpuCatalog::Default().Find(offer.name));
    workloads.push_back(workload);
    workloads.back().gpu = offer.name;
    MIGSERVE_ASSIGN_OR_RETURN(workload::CapacityMatrix m,
                              workload::CapacityMatrix::Build(
                                  workloads.back(), profiles, *gpu, false));
    caps.push_back(std::move(m));
    problems.emplace_back(workloads.back(), *gpu, caps.back());
    types.push_back({&problems.back(), offer.cost});
    gpus.push_back(gpu);
  }
  for (size_t j = 0; j < workload.services.size(); ++j) {
    bool runs = false;
    for (const workload::CapacityMatrix& m : caps) {
      for (int p = 0; p < m.num_profiles(); ++p) runs |= m.throughput(j, p) > 0;
    }
    if (!runs) {
      const workload::Service& s = workload.services[j];
      return Status::InvalidArgument(fmt::format(
          "{}:{}: services[{}]: service '{}' runs on none of the offered GPUs "
          "within its SLO",
          workload.source, s.line, j, s.name));
    }
  }
  std::optional<SurvivingFleet> surviving;
  milp::FleetSolution solution;
  if (workload.survive) {
    surviving = SolveFleetToSurvive(workload, types, options);
    solution = std::move(surviving->solution);
  } else {
    solution = milp::SolveFleet(
        types, deployment::CompletionRates(workload.services.size(), 0.0),
        options);
  }
  solution.outcome = Reported(solution.outcome);
  RunResult run;
  run.outcome = solution.outcome;
  run.reason = solution.reason;
  if (solution.outcome == Outcome::kInfeasible) return run;
  run.deployment.gpu = workload.gpu;
  run.deployment.services = workload.services;
  run.deployment.survive = workload.survive;
  for (size_t t = 0; t < types.size(); ++t) {
    deployment::Deployment part = deployment::MakeDeployment(
        workloads[t], *gpus[t], caps[t], solution.configs[t]);
    if (surviving) PlaceOnNodes(surviving->domains[t], &part);
    for (deployment::DeployedGpu& g : part.gpus) {
      g.id = static_cast<int>(run.deployment.gpus.size());
      g.gpu = gpus[t]->name;
      run.deployment.gpus.push_back(std::move(g));
    }
    solution.info.gpus_by_type[gpus[t]->name] =
        static_cast<int>(solution.configs[t].size());
  }
  deployment::Summary summary =
      SummaryOf("milp", workload, static_cast<int>(run.deployment.gpus.size()),
                solution.outcome, SecondsSince(begin));
  run.info.milp = std::move(solution.info);
  summary.extra = ToJson(run.info);
  if (surviving) summary.extra["survive_rounds"] = surviving->rounds;
  run.deployment.summary = std::move(summary);
  return run;
}

}  // namespace migserve::optimizer
