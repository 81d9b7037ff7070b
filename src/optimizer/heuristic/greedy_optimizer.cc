#include "optimizer/heuristic/greedy_optimizer.h"

#include <fmt/format.h>

#include <optional>

#include "optimizer/heuristic/mix_more.h"
#include "optimizer/heuristic/top_group.h"

namespace migserve::optimizer {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

std::vector<GpuConfig> Greedy(const ConfigSpace& space,
                              const CompletionRates& initial,
                              const GreedyOptions& options) {
  return *GreedyUntil(space, initial, options, Clock::time_point::max());
}

std::optional<std::vector<GpuConfig>> GreedyUntil(
    const ConfigSpace& space, const CompletionRates& initial,
    const GreedyOptions& options, Clock::time_point deadline) {
  const bool limited = deadline != Clock::time_point::max();
  const int n = space.problem().num_services();
  const ScoreRule& rule = options.score;
  CompletionRates rates = initial;
  TopGroup top(space, rates, rule);
  MixMoreSearch mix_more(space, options);
  std::vector<int> all(n);
  for (int s = 0; s < n; ++s) all[s] = s;

  std::vector<GpuConfig> out;
  while (!deployment::AllSatisfied(rates)) {
    if (limited && SecondsLeft(deadline) <= 0) return std::nullopt;
    double pair_score;
    int group = top.Find(&pair_score);
    double mix_score = pair_score;
    GpuConfig chosen;
    if (options.mix_more) {
      chosen = mix_more.Best(rates, all, &mix_score);
    }
    if (mix_score <= pair_score) {
      double score;
      int config = space.BestConfig(group, rates, rule, &score);
      chosen = space.Expand(space.Config(group, config));
    }
    for (int s : chosen.services) {
      if (s != kIdle) top.Changed(s);
    }
    deployment::AddConfig(chosen, space.problem().caps, &rates);
    out.push_back(std::move(chosen));
  }
  return out;
}

Solution GreedyOptimizer::Solve(const Problem& problem,
                                const CompletionRates& initial,
                                const SolveOptions& options) {
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  ConfigSpace space(problem);
  std::optional<std::vector<GpuConfig>> configs =
      GreedyUntil(space, initial, options.greedy, deadline);
  if (!configs) {
    return Infeasible(
        Interrupted()
            ? std::string("greedy: interrupted before every service was "
                          "served; it has no deployment to keep")
            : fmt::format("greedy: --time-limit {} s ended the search before "
                          "every service was served; raise --time-limit",
                          options.time_limit_s));
  }
  Solution solution;
  solution.configs = std::move(*configs);
  return solution;
}

}  // namespace migserve::optimizer
