#include "optimizer/heuristic/mcts_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>

#include "optimizer/deadline.h"
#include "optimizer/heuristic/greedy_optimizer.h"
#include "optimizer/heuristic/mix_more.h"

namespace migserve::optimizer {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

struct Scored {
  double score;
  GpuConfig config;
};

class Search {
 public:
  Search(const ConfigSpace& space, const SolveOptions& options, uint64_t seed,
         std::chrono::steady_clock::time_point deadline, MctsInfo* stats)
      : space_(space),
        options_(options),
        mcts_(options.mcts),
        rng_(seed),
        deadline_(deadline),
        stats_(stats) {}

  std::vector<GpuConfig> Run(const CompletionRates& initial);

 private:
  struct Node {
    CompletionRates rates;
    int parent = -1;
    int depth = 0;
    GpuConfig edge;  // the config from the parent
    std::vector<int> children;
    bool expanded = false;
    int visits = 0;
    double value = 0;  // sum of rewards
  };

  // The top `k` configs by score among those containing one of `services`
  // (each group once), plus the best mix-more config for them.
  std::vector<Scored> TopConfigs(const CompletionRates& rates,
                                 const std::vector<int>& services, int k);
  std::vector<int> Unsatisfied(const CompletionRates& rates) const;
  std::string Kind(const CompletionRates& rates) const;
  // Plays configs from the pools until every service is satisfied;
  // appends them to `path`.
  void Rollout(CompletionRates rates, std::vector<GpuConfig>* path);
  void Expand(int node);
  int Select(int node);

  const ConfigSpace& space_;
  const SolveOptions& options_;
  const MctsOptions& mcts_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point deadline_;
  MctsInfo* stats_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::vector<Scored>> pools_;
  int shortest_ = 0;
  int longest_ = 0;
};

std::vector<int> Search::Unsatisfied(const CompletionRates& rates) const {
  std::vector<int> out;
  for (size_t s = 0; s < rates.size(); ++s) {
    if (!deployment::Satisfied(rates[s])) out.push_back(static_cast<int>(s));
  }
  return out;
}

std::vector<Scored> Search::TopConfigs(const CompletionRates& rates,
                                       const std::vector<int>& services,
                                       int k) {
  const ScoreRule& rule = options_.greedy.score;
  // Each group once: a pair is skipped at its second service.
  std::vector<char> done(space_.problem().num_services(), 0);
  // (score, (group, config id)), best first after sorting.
  using Entry = std::pair<double, std::pair<int, int>>;
  std::vector<Entry> best;
  for (int s : services) {
    space_.ForEachGroupOf(s, [&](int g, int other) {
      if (other != deployment::kIdle && done[other]) return;
      space_.ForEachConfig(g, [&](int id, const PairConfig& c) {
        double sc = space_.Score(c, rates, rule);
        if (sc <= 0) return;
        if (static_cast<int>(best.size()) < k) {
          best.push_back({sc, {g, id}});
          std::push_heap(best.begin(), best.end(), std::greater<>());
        } else if (sc > best.front().first) {
          std::pop_heap(best.begin(), best.end(), std::greater<>());
          best.back() = {sc, {g, id}};
          std::push_heap(best.begin(), best.end(), std::greater<>());
        }
      });
    });
    done[s] = 1;
  }
  std::sort(best.begin(), best.end(), [](const Entry& x, const Entry& y) {
    return x.first > y.first || (x.first == y.first && x.second < y.second);
  });
  std::vector<Scored> out;
  for (const auto& [sc, at] : best)
    out.push_back({sc, space_.Expand(space_.Config(at.first, at.second))});
  if (options_.greedy.mix_more) {
    double sc = static_cast<int>(out.size()) < k ? 0 : out.back().score;
    GpuConfig mix = BestMixMore(space_, rates, options_.greedy, services, &sc);
    if (sc > 0 && (static_cast<int>(out.size()) < k || sc > out.back().score)) {
      if (static_cast<int>(out.size()) == k) out.pop_back();
      auto at = std::find_if(out.begin(), out.end(),
                             [&](const Scored& x) { return x.score < sc; });
      out.insert(at, Scored{sc, std::move(mix)});
    }
  }
  return out;
}

std::string Search::Kind(const CompletionRates& rates) const {
  std::string key(rates.size(), '\0');
  for (size_t s = 0; s < rates.size(); ++s) {
    if (deployment::Satisfied(rates[s])) continue;
    double gpus = (1.0 - rates[s]) / space_.best_single(static_cast<int>(s));
    key[s] = static_cast<char>(
        std::min<double>(mcts_.max_bucket, std::ceil(gpus * mcts_.resolution)));
  }
  return key;
}

void Search::Rollout(CompletionRates rates, std::vector<GpuConfig>* path) {
  const workload::CapacityMatrix& caps = space_.problem().caps;
  const ScoreRule& rule = options_.greedy.score;
  ++stats_->rollouts;
  while (!deployment::AllSatisfied(rates)) {
    std::string kind = Kind(rates);
    auto it = pools_.find(kind);
    const GpuConfig* pick = nullptr;
    if (it != pools_.end()) {
      // The pool was made for a state of this kind, not for this state: use
      // one of its configs that still helps here.
      // With probability `rollout_best`, the one that scores best here.
      const std::vector<Scored>& pool = it->second;
      if (std::bernoulli_distribution(mcts_.rollout_best)(rng_)) {
        double best = 0;
        for (const Scored& s : pool) {
          double sc = ScoreGpuConfig(s.config, caps, rates, rule);
          if (sc > best) {
            best = sc;
            pick = &s.config;
          }
        }
      } else {
        size_t first =
            std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng_);
        for (size_t i = 0; i < pool.size() && pick == nullptr; ++i) {
          const GpuConfig& c = pool[(first + i) % pool.size()].config;
          if (ScoreGpuConfig(c, caps, rates, rule) > 0) pick = &c;
        }
      }
    }
    if (pick != nullptr) {
      ++stats_->pool_hits;
      path->push_back(*pick);
    } else {
      ++stats_->pool_misses;
      std::vector<Scored> pool =
          TopConfigs(rates, Unsatisfied(rates), mcts_.pool_size);
      assert(!pool.empty());
      size_t i =
          std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng_);
      path->push_back(pool[i].config);
      pools_[kind] = std::move(pool);
    }
    deployment::AddConfig(path->back(), caps, &rates);
  }
}

void Search::Expand(int index) {
  std::vector<int> unsatisfied = Unsatisfied(nodes_[index].rates);
  std::shuffle(unsatisfied.begin(), unsatisfied.end(), rng_);
  if (static_cast<int>(unsatisfied.size()) > mcts_.sample_services) {
    unsatisfied.resize(mcts_.sample_services);
  }
  std::vector<Scored> top =
      TopConfigs(nodes_[index].rates, unsatisfied, mcts_.top_k);
  nodes_[index].expanded = true;
  for (Scored& s : top) {
    Node child;
    child.rates = nodes_[index].rates;
    deployment::AddConfig(s.config, space_.problem().caps, &child.rates);
    child.parent = index;
    child.depth = nodes_[index].depth + 1;
    child.edge = std::move(s.config);
    nodes_.push_back(std::move(child));
    nodes_[index].children.push_back(static_cast<int>(nodes_.size()) - 1);
  }
}

int Search::Select(int index) {
  const Node& node = nodes_[index];
  int best = -1;
  double best_value = -1;
  for (int c : node.children) {
    const Node& child = nodes_[c];
    if (child.visits == 0) return c;
    double value =
        child.value / child.visits +
        mcts_.exploration * std::sqrt(std::log(node.visits) / child.visits);
    if (value > best_value) {
      best_value = value;
      best = c;
    }
  }
  return best;
}

std::vector<GpuConfig> Search::Run(const CompletionRates& initial) {
  Node root;
  root.rates = initial;
  nodes_.push_back(std::move(root));
  // The first rollout plays the best config at every step: the greedy's
  // picks, which the greedy itself finds in seconds at region scale.
  std::vector<GpuConfig> best = Greedy(space_, initial, options_.greedy);
  ++stats_->rollouts;
  shortest_ = longest_ = static_cast<int>(best.size());
  // A line on stderr at least every 2 s: a long search is not silent.
  Clock::time_point begin = Clock::now();
  ProgressTimer progress;
  for (int it = 0; it < mcts_.iterations; ++it) {
    if (SecondsLeft(deadline_) <= 0) break;
    if (options_.progress && progress.Due()) {
      options_.progress(
          fmt::format("mcts: {} iterations, best {} GPUs, {} nodes, {:.0f} s",
                      it, shortest_, nodes_.size(), SecondsSince(begin)));
    }
    ++stats_->iterations;
    int index = 0;
    while (nodes_[index].expanded && !nodes_[index].children.empty()) {
      index = Select(index);
    }
    if (!deployment::AllSatisfied(nodes_[index].rates) &&
        !nodes_[index].expanded) {
      Expand(index);
      if (!nodes_[index].children.empty()) index = nodes_[index].children[0];
    }
    std::vector<GpuConfig> tail;
    Rollout(nodes_[index].rates, &tail);
    int length = nodes_[index].depth + static_cast<int>(tail.size());
    if (length < shortest_) {
      shortest_ = length;
      std::vector<GpuConfig> path;
      for (int n = index; n > 0; n = nodes_[n].parent) {
        path.push_back(nodes_[n].edge);
      }
      std::reverse(path.begin(), path.end());
      path.insert(path.end(), tail.begin(), tail.end());
      best = std::move(path);
    }
    longest_ = std::max(longest_, length);
    double reward = longest_ == shortest_
                        ? 1.0
                        : double(longest_ - length) / (longest_ - shortest_);
    for (int n = index; n >= 0; n = nodes_[n].parent) {
      ++nodes_[n].visits;
      nodes_[n].value += reward;
    }
  }
  stats_->nodes = static_cast<int>(nodes_.size());
  return best;
}

}  // namespace

std::vector<GpuConfig> Mcts(const ConfigSpace& space,
                            const CompletionRates& initial,
                            const SolveOptions& options, uint64_t seed,
                            std::chrono::steady_clock::time_point deadline,
                            MctsInfo* stats) {
  Search search(space, options, seed, deadline, stats);
  return search.Run(initial);
}

Solution MctsOptimizer::Solve(const Problem& problem,
                              const CompletionRates& initial,
                              const SolveOptions& options) {
  ConfigSpace space(problem);
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  MctsInfo stats;
  Solution solution;
  solution.configs =
      Mcts(space, initial, options, options.seed, deadline, &stats);
  solution.info.mcts = stats;
  return solution;
}

}  // namespace migserve::optimizer
