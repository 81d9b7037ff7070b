#include "llm/batcher_simulation.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "queueing/arrivals.h"
#include "queueing/p99_capacity.h"

namespace migserve::llm {
namespace {

struct Request {
  double arrival_s = 0;
  long prompt = 1;
  long output = 1;
  long cached = 0;      // prompt tokens found in the prefix cache
  double first_s = -1;  // its first token
  long made = 0;        // output tokens so far
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

std::vector<Request> MakeRequests(const LlmTerms& terms,
                                  const queueing::Traffic& traffic,
                                  const BatcherRun& run) {
  queueing::ShapedStream arrivals(queueing::ShapeAt(traffic, run.rate),
                                  run.seed);
  Lengths prompts(terms.prompt_tokens, terms.prompt_cv, run.seed + 1);
  Lengths outputs(terms.output_tokens, terms.output_cv, run.seed + 2);
  std::vector<Request> requests(static_cast<size_t>(run.requests));
  for (Request& r : requests) {
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

}  // namespace

BatcherSamples RunBatcher(const SliceCapacity& slice, const LlmTerms& terms,
                          const queueing::Traffic& traffic,
                          const BatcherRun& run) {
  std::vector<Request> requests = MakeRequests(terms, traffic, run);
  BatcherSamples out;
  // Admitted requests in order of admission: those still prefilling
  // (prefilled < prompt) and those decoding.
  std::vector<size_t> running;
  std::vector<long> prefilled(requests.size(), 0);
  size_t next = 0;  // the first request not admitted
  long room = 0;    // KV tokens reserved
  double now = 0, occupied = 0, tokens = 0;
  const long unlimited = std::numeric_limits<long>::max();
  while (next < requests.size() || !running.empty()) {
    if (running.empty() && requests[next].arrival_s > now) {
      now = requests[next].arrival_s;
    }
    // The step's token budget goes to the running requests first (a
    // decode one token, a prefill its next chunk), then to those waiting,
    // in order (vLLM V1's scheduler).
    long budget =
        slice.max_batched_tokens > 0 ? slice.max_batched_tokens : unlimited;
    StepLoad load;
    std::vector<std::pair<size_t, long>> chunks;  // request, tokens
    auto prefill = [&](size_t i) {
      Request& r = requests[i];
      long c = std::min(r.prompt - prefilled[i], budget);
      if (c <= 0) return;
      load.prefill_tokens += c;
      load.context_tokens += prefilled[i];
      load.attention_pairs += PrefillPairs(static_cast<double>(prefilled[i]),
                                           static_cast<double>(c));
      budget -= c;
      chunks.emplace_back(i, c);
    };
    std::vector<size_t> decoding;
    for (size_t i : running) {
      const Request& r = requests[i];
      if (prefilled[i] < r.prompt) {
        prefill(i);
      } else if (budget > 0) {
        --budget;
        ++load.decodes;
        load.context_tokens += r.prompt + r.made;
        load.attention_pairs += static_cast<double>(r.prompt + r.made);
        decoding.push_back(i);
      }
    }
    while (next < requests.size() && requests[next].arrival_s <= now &&
           static_cast<int>(running.size()) < slice.max_batch && budget > 0) {
      Request& r = requests[next];
      if (r.prompt + r.output > slice.kv_tokens) {
        out.fits = false;
        return out;
      }
      if (room + r.prompt + r.output > slice.kv_tokens) break;
      room += r.prompt + r.output;
      prefilled[next] = r.cached;  // read, not computed
      running.push_back(next);
      prefill(next++);
    }
    double step_s = slice.StepMs(load) / 1e3;
    occupied += step_s * static_cast<double>(room) /
                static_cast<double>(slice.kv_tokens);
    now += step_s;
    // A prompt's last chunk gives its first token; a decode its next.
    auto emit = [&](size_t i) {
      Request& r = requests[i];
      if (r.made++ == 0) r.first_s = now;
      tokens += 1;
      if (r.made == r.output) {
        r.done_s = now;
        room -= r.prompt + r.output;
      }
    };
    for (auto [i, c] : chunks) {
      prefilled[i] += c;
      if (prefilled[i] == requests[i].prompt) emit(i);
    }
    for (size_t i : decoding) emit(i);
    std::erase_if(running, [&](size_t i) { return requests[i].done_s >= 0; });
  }
  for (size_t i = requests.size() / 10; i < requests.size(); ++i) {
    const Request& r = requests[i];
    out.ttft_ms.push_back((r.first_s - r.arrival_s) * 1e3);
    if (r.output > 1) {
      out.tpot_ms.push_back((r.done_s - r.first_s) * 1e3 /
                            static_cast<double>(r.output - 1));
    }
    out.latency_ms.push_back((r.done_s - r.arrival_s) * 1e3);
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
