// What a service of `kind: llm` asks (docs/llm.md): its p99 time to first
// token and time per output token, and the lengths of its requests; and
// the table of those fields as a workload and a deployment spell them,
// which their readers and writers go through (workload/service_kind.h).
#ifndef MIGSERVE_LLM_LLM_TERMS_H_
#define MIGSERVE_LLM_LLM_TERMS_H_

#include <vector>

#include "boundary/number.h"

namespace migserve::llm {

struct LlmTerms {
  double ttft_ms = 0;        // p99 time to first token
  double tpot_ms = 0;        // p99 time per output token after the first
  double prompt_tokens = 0;  // mean prompt length
  double output_tokens = 0;  // mean output length
  double prompt_cv = 0;      // standard deviation / mean (0: all the same)
  double output_cv = 0;
  double latency_ms = 0;  // p99 request latency (0: none asked)
  // The share of each prompt's tokens the engine finds in its prefix cache
  // (vLLM's automatic prefix caching: a shared system prompt, earlier turns
  // of a conversation): they are not computed again, though their KV cache
  // is read. vLLM reports it as prefix cache hits over queries. 0: none.
  double prefix_cache_hit_rate = 0;
  // The longest sequence, prompt and output tokens, a replica takes
  // (vLLM's --max-model-len; request_lengths.h). 0: the p99 prompt plus
  // the p99 output.
  double max_model_len = 0;

  bool operator==(const LlmTerms&) const = default;
};

// One field of a service's terms in a workload (YAML) and a deployment
// (JSON). latency_ms is every service's field, not in the table.
struct LlmTermField {
  const char* key;
  double LlmTerms::*member;
  NumberRange range;
  bool required;
  // Written even at 0 (an optional field files have always carried);
  // else left out at 0.
  bool written_at_zero = true;
};

// The fields in the order files write them.
const std::vector<LlmTermField>& LlmTermFields();

// A service's p99 request latency where its file gives none: the first
// token and the others of a long output (mean + 3 standard deviations).
double DefaultLatencyMs(const LlmTerms& terms);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_TERMS_H_
