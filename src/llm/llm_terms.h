// What a service of `kind: llm` asks (docs/llm.md): its p99 time to first
// token and time per output token, and the lengths of its requests.
#ifndef MIGSERVE_LLM_LLM_TERMS_H_
#define MIGSERVE_LLM_LLM_TERMS_H_

namespace migserve::llm {

struct LlmTerms {
  double ttft_ms = 0;        // p99 time to first token
  double tpot_ms = 0;        // p99 time per output token after the first
  double prompt_tokens = 0;  // mean prompt length
  double output_tokens = 0;  // mean output length
  double prompt_cv = 0;      // standard deviation / mean (0: all the same)
  double output_cv = 0;
  double latency_ms = 0;  // p99 request latency (0: none asked)

  bool operator==(const LlmTerms&) const = default;
};

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_TERMS_H_
