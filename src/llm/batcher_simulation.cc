#include "llm/batcher_simulation.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "llm/continuous_batcher.h"
#include "queueing/arrivals.h"
#include "queueing/p99_capacity.h"

namespace migserve::llm {
namespace {

// A request's times in the simulation.
struct Times {
  double first_s = -1;  // its first token
  double done_s = -1;
};

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
  for (BatcherArrival& r : requests) {
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
  std::vector<BatcherArrival> requests = BatcherArrivals(terms, traffic, run);
  std::vector<Times> times(requests.size());
  BatcherSamples out;
  ContinuousBatcher batcher(slice);
  for (const BatcherArrival& r : requests) {
    if (!batcher.Fits({r.prompt, r.output, r.cached})) {
      out.fits = false;
      return out;
    }
  }
  size_t next = 0;  // the first request not added
  double now = 0, occupied = 0, tokens = 0;
  while (next < requests.size() || !batcher.Idle()) {
    if (batcher.Idle()) now = std::max(now, requests[next].arrival_s);
    for (; next < requests.size() && requests[next].arrival_s <= now; ++next) {
      const BatcherArrival& r = requests[next];
      batcher.Add({r.prompt, r.output, r.cached});
    }
    ContinuousBatcher::Step step = batcher.Next();
    double step_s = step.ms / 1e3;
    occupied += step_s * static_cast<double>(step.reserved) /
                static_cast<double>(slice.kv_tokens);
    now += step_s;
    for (size_t i : step.tokens) {
      if (batcher.Made(i) == 1) times[i].first_s = now;
      if (batcher.Done(i)) times[i].done_s = now;
      tokens += 1;
    }
  }
  for (size_t i = requests.size() / 10; i < requests.size(); ++i) {
    const BatcherArrival& r = requests[i];
    const Times& t = times[i];
    out.ttft_ms.push_back((t.first_s - r.arrival_s) * 1e3);
    if (r.output > 1) {
      out.tpot_ms.push_back((t.done_s - t.first_s) * 1e3 /
                            static_cast<double>(r.output - 1));
    }
    out.latency_ms.push_back((t.done_s - r.arrival_s) * 1e3);
  }
  out.kv_occupancy = now > 0 ? occupied / now : 0;
  out.output_tokens_per_s = now > 0 ? tokens / now : 0;
  return out;
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
