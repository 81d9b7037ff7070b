// A replica's continuous batcher (continuous_batcher.h) on simulated time
// (docs/llm.md): requests of the service's lengths arrive as the replica's
// router gives them, join the batcher as they arrive, and take each step's
// time; their times to first token, per output token and to the end are
// the samples.
#ifndef MIGSERVE_LLM_BATCHER_SIMULATION_H_
#define MIGSERVE_LLM_BATCHER_SIMULATION_H_

#include <cstdint>
#include <vector>

#include "llm/llm_terms.h"
#include "llm/slice_model.h"
#include "queueing/traffic.h"

namespace migserve::llm {

struct BatcherRun {
  double rate = 0;      // requests/s the replica receives
  int requests = 2000;  // simulated, the first tenth a warm-up not counted
  uint64_t seed = 1;
};

struct BatcherStats {
  int counted = 0;  // requests measured
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  double tpot_p50_ms = 0, tpot_p99_ms = 0;
  double latency_p50_ms = 0, latency_p99_ms = 0;
  double kv_occupancy = 0;  // mean share of the KV room in use, by time
  double output_tokens_per_s = 0;
  // A request longer than the KV room never runs: then false, and the
  // percentiles are meaningless.
  bool fits = true;
};

// A service's requests as conversations, the prefix cache's unit
// (docs/llm.md, "Prefix affinity"): each request continues one of the
// conversations in progress, chosen at random; a conversation ends after
// kConversationTurns requests and a new one begins. In progress at once:
// the rate x kTurnGapS (each conversation asking every kTurnGapS seconds
// on average), at least 1.
inline constexpr int kConversationTurns = 8;
inline constexpr double kTurnGapS = 10;

// One simulated request: when it arrives (s from the start) and its
// lengths, tokens.
struct BatcherArrival {
  double arrival_s = 0;
  long prompt = 1;
  long output = 1;
  // Prompt tokens found in the prefix cache where the replica holds the
  // conversation's earlier turns (terms' prefix_cache_hit_rate).
  long cached = 0;
  long conversation = 0;
  bool opens = true;  // its conversation's first request
};

// The requests RunBatcher simulates for `run` (the same for the same
// arguments): `run.requests` of `terms`' lengths (gamma), arriving as
// `traffic` gives a replica receiving `run.rate`, the first tenth a
// warm-up. A test replays them through an emulated replica.
std::vector<BatcherArrival> BatcherArrivals(const LlmTerms& terms,
                                            const queueing::Traffic& traffic,
                                            const BatcherRun& run);

// Each counted request's times, ms (tpot: those with more than one output
// token), and the replica's mean KV occupancy and output tokens/s.
struct BatcherSamples {
  std::vector<double> ttft_ms, tpot_ms, latency_ms;
  // The requests each replica was given (RunBalancedBatchers' balancing).
  std::vector<long> dispatched;
  double kv_occupancy = 0;
  double output_tokens_per_s = 0;
  // The share of the counted requests' prompt tokens found in the prefix
  // cache: terms' prefix_cache_hit_rate where every request reached a
  // replica holding its conversation's earlier turns (a conversation's
  // first request counts as held), less where one did not.
  double prefix_cache_hit_rate = 0;
  bool fits = true;
};

// Runs `run.requests` requests of `terms`' lengths through a replica of
// `slice`, arriving as `traffic` gives a replica receiving `run.rate`.
// Deterministic for a seed.
BatcherSamples RunBatcher(const SliceCapacity& slice, const LlmTerms& terms,
                          const queueing::Traffic& traffic,
                          const BatcherRun& run);

// RunBatcher's samples summarized.
BatcherStats SimulateBatcher(const SliceCapacity& slice, const LlmTerms& terms,
                             const queueing::Traffic& traffic,
                             const BatcherRun& run);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_BATCHER_SIMULATION_H_
