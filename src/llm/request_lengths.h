// How long a service's requests get (docs/llm.md, "Serving"): the
// quantiles of the gamma lengths the batcher simulation draws
// (batcher_simulation.h), and the longest sequence a replica must take,
// vLLM's --max-model-len.
#ifndef MIGSERVE_LLM_REQUEST_LENGTHS_H_
#define MIGSERVE_LLM_REQUEST_LENGTHS_H_

#include <string>

#include "llm/llm_model.h"
#include "llm/llm_terms.h"

namespace migserve::llm {

// The quantile `p` (0 < p < 1) of a token count of mean `mean` and
// coefficient of variation `cv`: a gamma of shape 1/cv^2 and scale
// mean * cv^2, `mean` itself for cv 0; at least 1.
double LengthQuantile(double mean, double cv, double p);

// The longest sequence (prompt and output tokens) a replica of a service
// of `terms` on `model` takes: the service's max_model_len where it sets
// one, else the p99 prompt plus the p99 output, rounded up to a whole
// token and at most the model's context (where the table gives one).
// A sequence past it is refused by the engine, so a slice whose KV cache
// cannot hold one such sequence cannot serve the service.
long MaxModelLen(const LlmTerms& terms, const LlmModel& model);

// Where `terms` set a max_model_len below the p99 prompt plus the p99
// output (rounded up), what is wrong, naming the numbers: vLLM refuses a
// request longer than its --max-model-len, so more than one request in a
// hundred would be refused. "" where it is none or long enough.
std::string MaxModelLenProblem(const LlmTerms& terms);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_REQUEST_LENGTHS_H_
