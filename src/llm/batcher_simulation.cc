#include "llm/batcher_simulation.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "llm/balanced_batchers.h"
#include "queueing/arrivals.h"
#include "queueing/p99_capacity.h"

namespace migserve::llm {
namespace {

// A token count of mean `mean` and coefficient of variation `cv` (gamma;
// `mean` itself for cv 0), at least 1.
class Lengths {
 public:
  Lengths(double mean, double cv, uint64_t seed)
      : rng_(seed),
        mean_(mean),
        gamma_(cv > 0 ? 1 / (cv * cv) : 1, cv > 0 ? mean * cv * cv : 1),
        random_(cv > 0) {}
  long Next() {
    double x = random_ ? gamma_(rng_) : mean_;
    return std::max(1L, std::lround(x));
  }

 private:
  std::mt19937_64 rng_;
  double mean_;
  std::gamma_distribution<double> gamma_;
  bool random_;
};

}  // namespace

std::vector<BatcherArrival> BatcherArrivals(const LlmTerms& terms,
                                            const queueing::Traffic& traffic,
                                            const BatcherRun& run) {
  queueing::ShapedStream arrivals(queueing::ShapeAt(traffic, run.rate),
                                  run.seed);
  Lengths prompts(terms.prompt_tokens, terms.prompt_cv, run.seed + 1);
  Lengths outputs(terms.output_tokens, terms.output_cv, run.seed + 2);
  std::vector<BatcherArrival> requests(static_cast<size_t>(run.requests));
  // The conversations in progress (their ids and turns so far), drawn
  // from a stream of their own: the lengths and arrivals stay as they
  // were without them.
  std::mt19937_64 pick(run.seed + 3);
  const size_t open = static_cast<size_t>(
      std::clamp(std::lround(run.rate * kTurnGapS), 1L,
                 static_cast<long>(std::max(1, run.requests))));
  std::vector<std::pair<long, int>> talks(open);
  long conversations = 0;
  for (auto& t : talks) t = {conversations++, 0};
  for (BatcherArrival& r : requests) {
    auto& [id, turns] =
        talks[std::uniform_int_distribution<size_t>(0, open - 1)(pick)];
    r.conversation = id;
    r.opens = turns == 0;
    if (++turns == kConversationTurns) {
      id = conversations++;
      turns = 0;
    }
    r.arrival_s = arrivals.Next() / run.rate;
    r.prompt = prompts.Next();
    r.output = outputs.Next();
    // The last prompt token is always computed: it gives the first token.
    r.cached =
        std::min(r.prompt - 1, std::lround(terms.prefix_cache_hit_rate *
                                           static_cast<double>(r.prompt)));
  }
  return requests;
}

BatcherSamples RunBatcher(const SliceCapacity& slice, const LlmTerms& terms,
                          const queueing::Traffic& traffic,
                          const BatcherRun& run) {
  return RunBalancedBatchers({{slice, 1}}, 1, Balancing::kAffinity, terms,
                             traffic, run);
}

BatcherStats SimulateBatcher(const SliceCapacity& slice, const LlmTerms& terms,
                             const queueing::Traffic& traffic,
                             const BatcherRun& run) {
  BatcherSamples s = RunBatcher(slice, terms, traffic, run);
  BatcherStats stats;
  stats.fits = s.fits;
  stats.counted = static_cast<int>(s.ttft_ms.size());
  stats.ttft_p50_ms = queueing::Quantile(&s.ttft_ms, 0.5);
  stats.ttft_p99_ms = queueing::Quantile(&s.ttft_ms, 0.99);
  stats.tpot_p50_ms = queueing::Quantile(&s.tpot_ms, 0.5);
  stats.tpot_p99_ms = queueing::Quantile(&s.tpot_ms, 0.99);
  stats.latency_p50_ms = queueing::Quantile(&s.latency_ms, 0.5);
  stats.latency_p99_ms = queueing::Quantile(&s.latency_ms, 0.99);
  stats.kv_occupancy = s.kv_occupancy;
  stats.output_tokens_per_s = s.output_tokens_per_s;
  return stats;
}

}  // namespace migserve::llm
