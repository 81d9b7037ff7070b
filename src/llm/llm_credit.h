// What one replica of an LLM service is credited with (docs/llm.md, "p99
// credits"): the highest request rate at which the token-level simulation
// of its continuous batcher (batcher_simulation.h), with the arrivals its
// router gives it, keeps the p99 time to first token, the p99 time per
// output token and the p99 request latency within the service's SLOs. The
// optimizer, the controller and routing read it as they read any credit.
// A search's result is kept in the process's credit cache
// (queueing/credit_cache.h), keyed by every input it reads (CreditKey), as
// the other credits are.
#ifndef MIGSERVE_LLM_LLM_CREDIT_H_
#define MIGSERVE_LLM_LLM_CREDIT_H_

#include <string>

#include "llm/batcher_simulation.h"
#include "llm/llm_model.h"
#include "llm/llm_terms.h"
#include "llm/slice_model.h"
#include "mig/gpu_model.h"
#include "queueing/traffic.h"

namespace migserve::llm {

struct LlmCredit {
  double rate = 0;  // requests/s; 0: the slice cannot serve the service
  std::string why;  // where rate is 0: why not
  SliceCapacity slice;
  BatcherStats at_rate;  // the simulation at the credited rate
};

// The credit of a replica of `model` on `profile` of `gpu` for a service
// of `terms` behind `traffic` (its service_rate the service's rate).
LlmCredit CreditOf(const LlmModel& model, const mig::GpuModel& gpu,
                   const mig::Profile& profile, const LlmTerms& terms,
                   const queueing::Traffic& traffic,
                   const EngineOptions& engine = {});

// The most requests/s any replica of `model` on `profile` of `gpu` could
// complete, whatever its calibration, engine or margin: `sequences` at once,
// each of `output_tokens` tokens, every token from a step of `sequences`
// decodes that takes at least its reads and products at the slice's peaks
// (efficiencies 1, no overhead, no KV cache read). A deployment that
// declares more for a replica claims what the hardware cannot do. 0 where
// the model does not fit the slice.
double PeakRequestRate(const LlmModel& model, const mig::GpuModel& gpu,
                       const mig::Profile& profile, int sequences,
                       double output_tokens);

// The credit cache's key of the search for a replica of `slice` under
// `terms` and `traffic`: what the search reads (the slice's figures, not
// the model, GPU and engine that made them: two questions with the same
// figures have one answer) and its settings, after a version word. Every
// field of the three is in it: the build fails where one is added and not
// written.
std::string CreditKey(const SliceCapacity& slice, const LlmTerms& terms,
                      const queueing::Traffic& traffic);

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_CREDIT_H_
