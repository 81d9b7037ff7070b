#include "optimizer/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "optimizer/baseline/static_partition.h"
#include "optimizer/deadline.h"
#include "optimizer/heuristic/genetic_optimizer.h"
#include "optimizer/heuristic/greedy_optimizer.h"
#include "optimizer/heuristic/mcts_optimizer.h"
#include "optimizer/milp/milp_optimizer.h"
#include "optimizer/parvagpu/parvagpu_optimizer.h"
#include "optimizer/survive.h"
#include "workload/relaxed_bound.h"

namespace migserve::optimizer {

std::vector<std::string> AlgorithmNames() {
  return {"whole", "all-1g",    "mix",  "greedy",
          "mcts",  "two-phase", "milp", "parvagpu"};
}

StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(std::string_view name) {
  if (name == "whole") {
    return std::unique_ptr<Optimizer>(
        new HomogeneousOptimizer(HomogeneousOptimizer::Size::kWhole));
  }
  if (name == "all-1g") {
    return std::unique_ptr<Optimizer>(
        new HomogeneousOptimizer(HomogeneousOptimizer::Size::kOneSlice));
  }
  if (name == "mix") return std::unique_ptr<Optimizer>(new MixOptimizer());
  if (name == "greedy") {
    return std::unique_ptr<Optimizer>(new GreedyOptimizer());
  }
  if (name == "mcts") return std::unique_ptr<Optimizer>(new MctsOptimizer());
  if (name == "milp")
    return std::unique_ptr<Optimizer>(new milp::MilpOptimizer());
  if (name == "parvagpu") {
    return std::unique_ptr<Optimizer>(new ParvaGpuOptimizer());
  }
  if (name == "two-phase") {
    return std::unique_ptr<Optimizer>(
        new TwoPhaseOptimizer(GreedyAlgorithm(), ChosenSlowAlgorithm()));
  }
  return Status::InvalidArgument(
      fmt::format("--algo: unknown algorithm '{}' (known: {})", name,
                  fmt::join(AlgorithmNames(), ", ")));
}

deployment::Summary SummaryOf(const char* algorithm,
                              const workload::Workload& workload, int gpus,
                              deployment::SolveStatus status, double seconds) {
  deployment::Summary summary;
  summary.algorithm = algorithm;
  summary.gpus = gpus;
  summary.status = status;
  summary.seconds = seconds;
  summary.router = workload.router;
  return summary;
}

deployment::Summary SummaryOf(const char* algorithm, const Problem& problem,
                              const Solution& solution, double seconds) {
  deployment::Summary summary = SummaryOf(
      algorithm, problem.workload, static_cast<int>(solution.configs.size()),
      solution.outcome, seconds);
  summary.lower_bound = ProvenLowerBound(problem, solution);
  summary.extra = ToJson(solution.info);
  return summary;
}

namespace {

// Empty if every service of `configs` has its min_replicas, else why not:
// only the exact model counts replicas (docs/capacity.md, "Redundancy").
std::string ShortOfReplicas(const char* algorithm, const Problem& problem,
                            const std::vector<deployment::GpuConfig>& configs) {
  std::vector<int> replicas(problem.num_services(), 0);
  for (const deployment::GpuConfig& c : configs) {
    for (int j : c.services) {
      if (j != deployment::kIdle) ++replicas[j];
    }
  }
  for (int j = 0; j < problem.num_services(); ++j) {
    const workload::Service& s = problem.workload.services[j];
    if (replicas[j] >= s.min_replicas) continue;
    return fmt::format(
        "{}:{}: services[{}].min_replicas: {} gave '{}' {} replica(s) of "
        "the {} it asks for; only --algo milp models min_replicas",
        problem.workload.source, s.line, j, algorithm, s.name, replicas[j],
        s.min_replicas);
  }
  return "";
}

}  // namespace

RunResult RunOptimizer(Optimizer& optimizer, const Problem& problem,
                       const SolveOptions& options) {
  if (Status valid = options.Validate(); !valid.ok()) {
    RunResult run;
    run.outcome = Outcome::kInfeasible;
    run.reason = "invalid options: " + valid.message();
    return run;
  }
  if (problem.num_services() > kMaxServices) {
    RunResult run;
    run.outcome = Outcome::kInfeasible;
    run.reason = fmt::format(
        "{} services, more than the {} one workload may have; split it",
        problem.num_services(), kMaxServices);
    return run;
  }
  int needs =
      workload::CeilGpus(workload::RelaxedBound(problem.caps, problem.gpu));
  if (needs > options.max_gpus) {
    RunResult run;
    run.outcome = Outcome::kInfeasible;
    run.reason = fmt::format(
        "the workload needs at least {} GPUs (its lower bound), more than "
        "the limit of {}; check its throughputs, or raise the limit "
        "(--max-gpus)",
        needs, options.max_gpus);
    return run;
  }
  Clock::time_point begin = Clock::now();
  std::optional<SurvivingSolution> surviving;
  if (problem.workload.survive) {
    surviving = SolveToSurvive(optimizer, problem, options);
  }
  Solution solution =
      surviving ? std::move(surviving->solution)
                : optimizer.Solve(
                      problem,
                      deployment::CompletionRates(problem.num_services(), 0.0),
                      options);
  double seconds = SecondsSince(begin);
  solution.outcome = Reported(solution.outcome);
  RunResult run;
  run.outcome = solution.outcome;
  run.reason = solution.reason;
  if (solution.outcome == Outcome::kInfeasible) return run;
  if (std::string short_of =
          ShortOfReplicas(optimizer.name(), problem, solution.configs);
      !short_of.empty()) {
    run.outcome = Outcome::kInfeasible;
    run.reason = std::move(short_of);
    return run;
  }
  run.deployment = deployment::MakeDeployment(problem.workload, problem.gpu,
                                              problem.caps, solution.configs);
  run.deployment.summary =
      SummaryOf(optimizer.name(), problem, solution, seconds);
  if (surviving) {
    // The last round's bound is for its raised rates; the first round's
    // holds for every deployment that survives.
    deployment::Summary& s = *run.deployment.summary;
    s.lower_bound = surviving->lower_bound;
    if (s.status == Outcome::kOptimal && s.gpus > surviving->lower_bound) {
      s.status = Outcome::kFeasible;
    }
    s.extra["survive_rounds"] = surviving->rounds;
    PlaceOnNodes(surviving->domains, &run.deployment);
  }
  run.info = std::move(solution.info);
  return run;
}

}  // namespace migserve::optimizer
