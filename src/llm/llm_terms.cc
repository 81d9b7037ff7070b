#include "llm/llm_terms.h"

namespace migserve::llm {

const std::vector<LlmTermField>& LlmTermFields() {
  constexpr NumberRange kTokens{1, 1e7}, kCv{0, 10};
  static const std::vector<LlmTermField> fields = {
      {"ttft_ms", &LlmTerms::ttft_ms, kLatencyMsRange, true},
      {"tpot_ms", &LlmTerms::tpot_ms, kLatencyMsRange, true},
      {"prompt_tokens", &LlmTerms::prompt_tokens, kTokens, true},
      {"output_tokens", &LlmTerms::output_tokens, kTokens, true},
      {"prompt_cv", &LlmTerms::prompt_cv, kCv, false},
      {"output_cv", &LlmTerms::output_cv, kCv, false},
      {"prefix_cache_hit_rate",
       &LlmTerms::prefix_cache_hit_rate,
       {0, 0.99},
       false,
       false},
      {"max_model_len", &LlmTerms::max_model_len, kTokens, false, false},
  };
  return fields;
}

double DefaultLatencyMs(const LlmTerms& terms) {
  return terms.ttft_ms +
         terms.tpot_ms * terms.output_tokens * (1 + 3 * terms.output_cv);
}

}  // namespace migserve::llm
