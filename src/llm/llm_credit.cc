#include "llm/llm_credit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>

#include "queueing/credit_cache.h"
#include "queueing/router_kind.h"

namespace migserve::llm {
namespace {

// Requests per simulation (the p99s of 3,600 counted), and its seeds.
constexpr int kCreditRequests = 4000;
constexpr uint64_t kCreditSeeds[] = {1, 2, 3};
// The share of each SLO a credit's p99s keep within: a p99 over 3,600
// requests is itself a few percent off (docs/llm.md, "p99 credits").
constexpr double kSloShare = 0.95;

// The rate's runs over the seeds, each p99 the worst of them: a search
// that took the highest rate one lucky sample passes would credit more
// than other samples, serve's among them, keep.
BatcherStats Worst(const SliceCapacity& slice, const LlmTerms& terms,
                   const queueing::Traffic& traffic, double rate) {
  BatcherStats worst;
  for (uint64_t seed : kCreditSeeds) {
    BatcherStats s =
        SimulateBatcher(slice, terms, traffic, {rate, kCreditRequests, seed});
    if (seed == kCreditSeeds[0]) {
      worst = s;
      continue;
    }
    worst.ttft_p99_ms = std::max(worst.ttft_p99_ms, s.ttft_p99_ms);
    worst.tpot_p99_ms = std::max(worst.tpot_p99_ms, s.tpot_p99_ms);
    worst.latency_p99_ms = std::max(worst.latency_p99_ms, s.latency_p99_ms);
    worst.fits = worst.fits && s.fits;
  }
  return worst;
}

// The credit cache's key of a search (queueing/credit_cache.h): every input
// it reads and its settings, so a value is reused only for the same
// question.
std::string CacheKey(const LlmModel& model, const mig::GpuModel& gpu,
                     const mig::Profile& profile, const LlmTerms& terms,
                     const queueing::Traffic& traffic,
                     const EngineOptions& engine) {
  std::string key = fmt::format("L {} {} {} {}", model.dtype,
                                queueing::RouterName(traffic.router),
                                std::size(kCreditSeeds), kCreditRequests);
  for (int n :
       {model.layers, model.kv_heads, model.head_dim, gpu.memory_slices,
        gpu.compute_slices, profile.memory_slices, profile.compute_slices,
        engine.max_batch, traffic.router_replicas}) {
    key += fmt::format(" {}", n);
  }
  for (double x : {model.parameters_b,
                   gpu.memory_bandwidth_gbs,
                   gpu.dense_bf16_tflops,
                   gpu.dense_fp8_tflops,
                   profile.memory_gb,
                   terms.ttft_ms,
                   terms.tpot_ms,
                   terms.prompt_tokens,
                   terms.output_tokens,
                   terms.prompt_cv,
                   terms.output_cv,
                   terms.latency_ms,
                   engine.memory_utilization,
                   engine.overhead_gib,
                   engine.bandwidth_efficiency,
                   engine.compute_efficiency,
                   engine.step_overhead_ms,
                   engine.decode_scale,
                   engine.prefill_scale,
                   traffic.service_rate,
                   traffic.cv,
                   kSloShare}) {
    key += fmt::format(" {:a}", x);
  }
  return key;
}

bool Within(const BatcherStats& s, const LlmTerms& terms) {
  return s.fits && s.ttft_p99_ms <= kSloShare * terms.ttft_ms &&
         s.tpot_p99_ms <= kSloShare * terms.tpot_ms &&
         (terms.latency_ms <= 0 ||
          s.latency_p99_ms <= kSloShare * terms.latency_ms);
}

}  // namespace

LlmCredit CreditOf(const LlmModel& model, const mig::GpuModel& gpu,
                   const mig::Profile& profile, const LlmTerms& terms,
                   const queueing::Traffic& traffic,
                   const EngineOptions& engine) {
  LlmCredit credit;
  StatusOr<SliceCapacity> slice = SliceOf(model, gpu, profile, engine);
  if (!slice.ok()) {
    credit.why = slice.status().message();
    return credit;
  }
  credit.slice = *slice;
  // A search found before (only credits above 0 are kept: the idle check
  // below passed for them).
  queueing::CreditCache* cache = queueing::GetCreditCache();
  std::string key;
  if (cache != nullptr) {
    key = CacheKey(model, gpu, profile, terms, traffic, engine);
    if (std::optional<double> known = cache->Find(key)) {
      credit.rate = *known;
      credit.at_rate = Worst(*slice, terms, traffic, *known);
      return credit;
    }
  }
  // No replica makes more tokens a second than a full batch at the
  // weights' read time: the search starts above that.
  double ceiling = slice->max_batch * 1e3 / slice->StepMs(0, 0) /
                   std::max(1.0, terms.output_tokens);
  double low = ceiling * 1e-4;
  BatcherStats at_low = Worst(*slice, terms, traffic, low);
  if (!Within(at_low, terms)) {
    credit.why =
        !at_low.fits
            ? fmt::format("{} holds {} KV tokens, fewer than a request needs",
                          profile.name, slice->kv_tokens)
            : fmt::format(
                  "even an idle replica misses the SLOs (p99 TTFT "
                  "{:.0f} ms, TPOT {:.1f} ms)",
                  at_low.ttft_p99_ms, at_low.tpot_p99_ms);
    return credit;
  }
  double high = ceiling;
  credit.rate = low;
  credit.at_rate = at_low;
  // Bisection in log space to 1%: within the SLOs at `low`, not at `high`.
  while (high / low > 1.01) {
    double mid = std::sqrt(low * high);
    BatcherStats s = Worst(*slice, terms, traffic, mid);
    if (Within(s, terms)) {
      low = mid;
      credit.rate = mid;
      credit.at_rate = s;
    } else {
      high = mid;
    }
  }
  if (cache != nullptr) cache->Add(key, credit.rate);
  return credit;
}

}  // namespace migserve::llm
