#include "llm/llm_credit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>

#include "llm/request_lengths.h"
#include "queueing/credit_cache.h"
#include "queueing/router_kind.h"
#include "util/field_count.h"

namespace migserve::llm {
namespace {

// Requests per simulation (the p99s of 3,600 counted), and its seeds.
constexpr int kCreditRequests = 4000;
constexpr uint64_t kCreditSeeds[] = {1, 2, 3};
// The share of each SLO a credit's p99s keep within: a p99 over 3,600
// requests is itself a few percent off (docs/llm.md, "p99 credits").
constexpr double kSloShare = 0.95;
// The first word of every key: a search that reads the same inputs but
// means another thing (another simulation, another rule) takes a new one,
// as leveldb's FilterPolicy::Name().
constexpr const char* kCreditKeyVersion = "llm-credit-2";

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

}  // namespace

std::string CreditKey(const SliceCapacity& slice, const LlmTerms& terms,
                      const queueing::Traffic& traffic) {
  // Every field of the three, written below: a field added to one fails
  // here until it is written too.
  static_assert(FieldCount<SliceCapacity>() == 11);
  static_assert(FieldCount<LlmTerms>() == 9);
  static_assert(FieldCount<queueing::Traffic>() == 4);
  std::string key =
      fmt::format("{} {} {} {:a}", kCreditKeyVersion, std::size(kCreditSeeds),
                  kCreditRequests, kSloShare);
  auto add = [&key](auto... xs) { ((key += fmt::format(" {}", xs)), ...); };
  auto add_real = [&key](auto... xs) {
    ((key += fmt::format(" {:a}", static_cast<double>(xs))), ...);
  };
  add(slice.kv_tokens, slice.max_batch, slice.max_batched_tokens, slice.experts,
      slice.experts_per_token);
  add_real(slice.shared_read_ms, slice.expert_read_ms,
           slice.kv_read_ms_per_token, slice.ms_per_token,
           slice.ms_per_attention_pair, slice.step_overhead_ms);
  add_real(terms.ttft_ms, terms.tpot_ms, terms.prompt_tokens,
           terms.output_tokens, terms.prompt_cv, terms.output_cv,
           terms.latency_ms, terms.prefix_cache_hit_rate, terms.max_model_len);
  add(queueing::RouterName(traffic.router), traffic.router_replicas);
  add_real(traffic.service_rate, traffic.cv);
  return key;
}

namespace {

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
  // vLLM starts no replica past the model's context, nor one whose KV
  // cache cannot hold one sequence of --max-model-len.
  long longest = MaxModelLen(terms, model);
  if (model.max_context > 0 && longest > model.max_context) {
    credit.why =
        fmt::format("max_model_len {} is past {}'s context of {} tokens",
                    longest, model.name, model.max_context);
    return credit;
  }
  if (slice->kv_tokens < longest) {
    credit.why = fmt::format(
        "{} holds {} KV tokens, fewer than one sequence of max_model_len {} "
        "(vLLM starts no such replica)",
        profile.name, slice->kv_tokens, longest);
    return credit;
  }
  // A search found before (only credits above 0 are kept: the idle check
  // below passed for them).
  queueing::CreditCache* cache = queueing::GetCreditCache();
  std::string key;
  if (cache != nullptr) {
    key = CreditKey(*slice, terms, traffic);
    if (std::optional<double> known = cache->Find(key)) {
      credit.rate = *known;
      credit.at_rate = Worst(*slice, terms, traffic, *known);
      return credit;
    }
  }
  // No replica makes more tokens a second than a full batch at the
  // weights' read time: the search starts above that.
  double ceiling = slice->max_batch * 1e3 / slice->StepMs({}) /
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

double PeakRequestRate(const LlmModel& model, const mig::GpuModel& gpu,
                       const mig::Profile& profile, int sequences,
                       double output_tokens) {
  EngineOptions peak;
  peak.bandwidth_efficiency = 1;
  peak.compute_efficiency = 1;
  peak.step_overhead_ms = 0;
  peak.max_batch = sequences;
  StatusOr<SliceCapacity> slice = SliceOf(model, gpu, profile, peak);
  if (!slice.ok() || sequences <= 0) return 0;
  StepLoad full;
  full.decodes = sequences;
  double step_ms = slice->StepMs(full);
  return step_ms > 0 ? sequences * 1e3 / step_ms / std::max(1.0, output_tokens)
                     : 0;
}

}  // namespace migserve::llm
