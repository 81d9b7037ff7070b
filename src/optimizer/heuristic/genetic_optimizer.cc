#include "optimizer/heuristic/genetic_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include "optimizer/deadline.h"
#include "optimizer/heuristic/greedy_optimizer.h"
#include "optimizer/heuristic/mcts_optimizer.h"
#include "optimizer/milp/milp_optimizer.h"
#include "util/mutex.h"
#include "util/tolerance.h"

namespace migserve::optimizer {
namespace {

using deployment::CompletionRates;
using deployment::GpuConfig;
using deployment::kIdle;

struct Chromosome {
  std::vector<GpuConfig> gpus;
  double surplus = 0;  // sum over services of (rate - 1): room to spare
};

void Measure(const ConfigSpace& space, const CompletionRates& initial,
             Chromosome* c) {
  CompletionRates rates =
      deployment::Completion(c->gpus, space.problem().caps, initial);
  c->surplus = 0;
  for (double r : rates) c->surplus += r - 1.0;
}

// Fewer GPUs first; among equals, more surplus (more room to drop a GPU).
bool Better(const Chromosome& x, const Chromosome& y) {
  if (x.gpus.size() != y.gpus.size()) return x.gpus.size() < y.gpus.size();
  return x.surplus > y.surplus + kTieTolerance;
}

// Swaps the services of random pairs of same-profile instances on different
// GPUs that run different services (an idle instance counts as one).
void Mutate(const GeneticOptions& options, std::mt19937_64& rng,
            Chromosome* c) {
  const size_t n = c->gpus.size();
  if (n < 2) return;
  int max_swaps = std::max(1, static_cast<int>(options.mutate_fraction * n));
  int swaps = std::uniform_int_distribution<int>(1, max_swaps)(rng);
  std::uniform_int_distribution<size_t> pick_gpu(0, n - 1);
  for (int s = 0; s < swaps; ++s) {
    for (int attempt = 0; attempt < 16; ++attempt) {
      size_t g1 = pick_gpu(rng), g2 = pick_gpu(rng);
      if (g1 == g2) continue;
      GpuConfig& a = c->gpus[g1];
      GpuConfig& b = c->gpus[g2];
      size_t k1 =
          std::uniform_int_distribution<size_t>(0, a.services.size() - 1)(rng);
      int profile = a.layout.instances()[k1].profile;
      std::vector<size_t> same;
      for (size_t k = 0; k < b.services.size(); ++k) {
        if (b.layout.instances()[k].profile == profile &&
            b.services[k] != a.services[k1]) {
          same.push_back(k);
        }
      }
      if (same.empty()) continue;
      size_t k2 =
          same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng)];
      std::swap(a.services[k1], b.services[k2]);
      break;
    }
  }
}

// Drops, smallest contribution first, every GPU the others can do without.
void Prune(const ConfigSpace& space, const CompletionRates& initial,
           Chromosome* c) {
  const workload::CapacityMatrix& caps = space.problem().caps;
  CompletionRates rates = deployment::Completion(c->gpus, caps, initial);
  std::vector<size_t> order(c->gpus.size());
  std::vector<double> weight(c->gpus.size(), 0.0);
  for (size_t g = 0; g < c->gpus.size(); ++g) {
    order[g] = g;
    for (double u : deployment::ConfigUtility(c->gpus[g], caps)) weight[g] += u;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return weight[x] < weight[y]; });
  std::vector<bool> dropped(c->gpus.size(), false);
  for (size_t g : order) {
    deployment::Utility u = deployment::ConfigUtility(c->gpus[g], caps);
    bool needed = false;
    for (size_t s = 0; s < u.size() && !needed; ++s) {
      needed = u[s] > 0 && !deployment::Satisfied(rates[s] - u[s]);
    }
    if (needed) continue;
    for (size_t s = 0; s < u.size(); ++s) rates[s] -= u[s];
    dropped[g] = true;
  }
  std::vector<GpuConfig> kept;
  for (size_t g = 0; g < c->gpus.size(); ++g) {
    if (!dropped[g]) kept.push_back(std::move(c->gpus[g]));
  }
  c->gpus = std::move(kept);
}

// Erases 1..erase_fraction of the GPUs at random and refills what they
// served with the slow algorithm.
void Crossover(const ConfigSpace& space, const CompletionRates& initial,
               const SolveOptions& options, const SlowAlgorithm& slow,
               Clock::time_point deadline, std::mt19937_64& rng,
               Chromosome* c) {
  const size_t n = c->gpus.size();
  if (n == 0) return;
  int max_erase = std::max(
      1, static_cast<int>(std::ceil(options.genetic.erase_fraction * n)));
  int erase = std::uniform_int_distribution<int>(1, max_erase)(rng);
  std::shuffle(c->gpus.begin(), c->gpus.end(), rng);
  c->gpus.resize(n - std::min<size_t>(erase, n));
  CompletionRates rates =
      deployment::Completion(c->gpus, space.problem().caps, initial);
  std::vector<GpuConfig> refill = slow(space, rates, options, rng(), deadline);
  c->gpus.insert(c->gpus.end(), refill.begin(), refill.end());
}

uint64_t JobSeed(uint64_t seed, int round, int job) {
  std::seed_seq seq{seed, static_cast<uint64_t>(round),
                    static_cast<uint64_t>(job)};
  std::mt19937_64 rng(seq);
  return rng();
}

}  // namespace

FastAlgorithm GreedyAlgorithm() {
  return [](const ConfigSpace& space, const CompletionRates& rates,
            const SolveOptions& options) {
    return Greedy(space, rates, options.greedy);
  };
}

SlowAlgorithm MctsAlgorithm() {
  return [](const ConfigSpace& space, const CompletionRates& rates,
            const SolveOptions& options, uint64_t seed,
            Clock::time_point deadline) {
    MctsInfo stats;
    return Mcts(space, rates, options, seed, deadline, &stats);
  };
}

SlowAlgorithm MilpAlgorithm() {
  return [](const ConfigSpace& space, const CompletionRates& rates,
            const SolveOptions& options, uint64_t seed,
            Clock::time_point deadline) {
    // CBC's standard solver keeps global state: one solve at a time.
    static Mutex solving;
    MutexLock lock(&solving);
    SolveOptions sub = options;
    sub.seed = seed;
    sub.progress = nullptr;
    sub.time_limit_s = std::max(0.01, SecondsLeft(deadline));
    return milp::MilpOptimizer().Solve(space.problem(), rates, sub).configs;
  };
}

SlowAlgorithm ChosenSlowAlgorithm() {
  return [mcts = MctsAlgorithm(), milp = MilpAlgorithm()](
             const ConfigSpace& space, const CompletionRates& rates,
             const SolveOptions& options, uint64_t seed,
             Clock::time_point deadline) {
    const SlowAlgorithm& slow = options.genetic.slow == "milp" ? milp : mcts;
    return slow(space, rates, options, seed, deadline);
  };
}

Solution TwoPhaseOptimizer::Solve(const Problem& problem,
                                  const CompletionRates& initial,
                                  const SolveOptions& options) {
  const GeneticOptions& ga = options.genetic;
  Clock::time_point begin = Clock::now();
  Clock::time_point deadline = SecondsFromNow(options.time_limit_s);
  auto elapsed = [&] { return SecondsSince(begin); };
  auto progress = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  ConfigSpace space(problem);
  Chromosome first;
  first.gpus = fast_(space, initial, options);
  Measure(space, initial, &first);
  const size_t fast_gpus = first.gpus.size();
  progress(fmt::format("two-phase: fast algorithm: {} GPUs, {:.1f} s",
                       fast_gpus, elapsed()));

  int threads = options.threads > 0
                    ? options.threads
                    : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Chromosome> population = {first};
  std::vector<int> rounds;
  std::string stopped = "patience";
  int stale = 0;
  for (int round = 1;; ++round) {
    if (ga.max_rounds > 0 && round > ga.max_rounds) {
      stopped = "max_rounds";
      break;
    }
    if (SecondsLeft(deadline) <= 0) {
      stopped = Interrupted() ? "interrupted" : "time_limit";
      break;
    }
    const int jobs = ga.population * ga.offspring;
    std::vector<Chromosome> children(jobs);
    std::atomic<int> next{0};
    auto work = [&] {
      for (int j = next++; j < jobs; j = next++) {
        std::mt19937_64 rng(JobSeed(options.seed, round, j));
        Chromosome child = population[j % population.size()];
        Mutate(ga, rng, &child);
        Crossover(space, initial, options, slow_, deadline, rng, &child);
        if (ga.prune) Prune(space, initial, &child);
        Measure(space, initial, &child);
        children[j] = std::move(child);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::min(threads, jobs); ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();

    size_t best_before = population.front().gpus.size();
    population.insert(population.end(), children.begin(), children.end());
    std::stable_sort(population.begin(), population.end(), Better);
    if (static_cast<int>(population.size()) > ga.population) {
      population.resize(ga.population);
    }
    size_t best = population.front().gpus.size();
    rounds.push_back(static_cast<int>(best));
    stale = best < best_before ? 0 : stale + 1;
    progress(
        fmt::format("two-phase: round {}: best {} GPUs (fast {}), {:.1f} s",
                    round, best, fast_gpus, elapsed()));
    if (stale >= ga.patience) break;
  }
  Solution solution;
  solution.configs = std::move(population.front().gpus);
  solution.outcome =
      stopped == "time_limit" ? Outcome::kTimeLimit : Outcome::kFeasible;
  solution.info.genetic = GeneticInfo{static_cast<int>(fast_gpus),
                                      std::move(rounds), stopped, threads};
  return solution;
}

}  // namespace migserve::optimizer
