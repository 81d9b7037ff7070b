// What one replica of a language model has on a MIG slice, from first
// principles (docs/llm.md, "Capacity per slice"): room for so many tokens
// of KV cache once the weights and the runtime's overhead are in the
// slice's memory, and the time of a continuous batcher's steps. A step
// reads the weights its tokens touch and the KV cache of every sequence
// in the batch, at the slice's share of the GPU's memory bandwidth (its
// memory slices), and computes its tokens' matrix products and attention
// at the slice's share of the GPU's tensor throughput (its SMs); it takes
// the longer of the two (a roofline) plus an overhead. Every figure is
// modelled unless the engine options carry a measurement's corrections
// (calibration.h).
#ifndef MIGSERVE_LLM_SLICE_MODEL_H_
#define MIGSERVE_LLM_SLICE_MODEL_H_

#include <algorithm>

#include "llm/llm_model.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::llm {

// The serving engine's settings and the model's efficiencies (vLLM's
// defaults where it has one).
struct EngineOptions {
  double memory_utilization = 0.9;  // vLLM's gpu_memory_utilization
  // Activations at the largest batch, CUDA graphs, the runtime: GiB.
  double overhead_gib = 2.0;
  int max_batch = 256;  // vLLM's max_num_seqs
  // Tokens one step computes (vLLM's max_num_batched_tokens with chunked
  // prefill, V1's default): prefill chunks and decodes share it. 0: vLLM's
  // default for the slice (8,192 where it has 70 GiB or more and is not an
  // A100's, else 2,048); -1: no chunking (a prompt prefills whole in the
  // step it joins, as engines without chunked prefill do).
  int max_batched_tokens = 0;
  // Shares of the slice's peak reached by a step's reads (weights and KV
  // cache) and by its matrix products (prefill and decode).
  double bandwidth_efficiency = 0.8;
  double compute_efficiency = 0.5;
  double step_overhead_ms = 2;  // scheduling and launches, per step
  // Measured corrections (calibration.h): a step's memory time (and its
  // overhead) and its compute time are the modelled ones times these. 1:
  // no measurement. A scale below its efficiency would claim more than
  // the slice's peak: calibration refuses it.
  double decode_scale = 1;
  double prefill_scale = 1;

  bool operator==(const EngineOptions&) const = default;
};

// What one step of a continuous batcher does: sequences given their next
// token over so much KV cache, and prompt tokens prefilled (a whole prompt
// or a chunk of one) over the context before them.
struct StepLoad {
  long decodes = 0;         // sequences given their next token
  long context_tokens = 0;  // KV cache tokens the step reads
  long prefill_tokens = 0;  // prompt tokens computed
  // Query-key pairs the step's attention computes: each decode's context,
  // and each prefill chunk's PrefillPairs.
  double attention_pairs = 0;
};

// The query-key pairs of a prompt chunk of `tokens` tokens after `offset`
// already prefilled: each attends those before it and itself (causal).
inline double PrefillPairs(double offset, double tokens) {
  return tokens * (offset + (tokens + 1) / 2);
}

struct SliceCapacity {
  long kv_tokens = 0;           // the KV cache's room, tokens
  int max_batch = 0;            // sequences at once
  long max_batched_tokens = 0;  // tokens a step computes; 0: no limit
  // The memory side, ms at the slice's bandwidth: a dense model's weights
  // (a mixture's shared ones) and one expert's in every layer, and a KV
  // cache token.
  double shared_read_ms = 0;
  double expert_read_ms = 0;
  int experts = 0, experts_per_token = 0;
  double kv_read_ms_per_token = 0;
  // The compute side, ms at the slice's tensor rate: a token through the
  // active weights, and one query-key pair of attention.
  double ms_per_token = 0;
  double ms_per_attention_pair = 0;
  double step_overhead_ms = 0;

  // The weights a step of `tokens` tokens reads: a mixture's experts each
  // picked at random by each token (LlmModel::WeightBytesRead).
  double WeightReadMs(long tokens) const;
  double MemoryMs(const StepLoad& load) const {
    return WeightReadMs(load.decodes + load.prefill_tokens) +
           kv_read_ms_per_token * static_cast<double>(load.context_tokens);
  }
  double ComputeMs(const StepLoad& load) const {
    return ms_per_token *
               static_cast<double>(load.decodes + load.prefill_tokens) +
           ms_per_attention_pair * load.attention_pairs;
  }
  // A step's time: the overhead and the longer of its reads and its
  // matrix products (a roofline: they overlap).
  double StepMs(const StepLoad& load) const {
    return step_overhead_ms + std::max(MemoryMs(load), ComputeMs(load));
  }
};

// The peaks a slice's figures may not exceed (the property docs/llm.md
// states): its share of the GPU's memory bandwidth, GB/s, and of its
// tensor throughput at the model's dtype, TFLOPS.
struct SlicePeaks {
  double bandwidth_gbs = 0;
  double tflops = 0;
};
SlicePeaks PeaksOf(const LlmModel& model, const mig::GpuModel& gpu,
                   const mig::Profile& profile);

// vLLM's default tokens per step on `profile` of `gpu`
// (EngineOptions::max_batched_tokens 0).
long DefaultBatchedTokens(const mig::GpuModel& gpu,
                          const mig::Profile& profile);

// A replica kept full: as many sequences of `prompt_tokens` and
// `output_tokens` as the batch and the KV room hold, each step giving each
// its next token (over half its output of context, on average) and
// prefilling the prompts of those that replace the ones finishing. The
// most output tokens per second the slice makes at those lengths.
struct Saturation {
  int sequences = 0;  // 0: a request of these lengths does not fit
  double step_ms = 0;
  double output_tokens_per_s = 0;
  bool compute_bound = false;  // its products take longer than its reads
};
Saturation SaturationOf(const SliceCapacity& slice, double prompt_tokens,
                        double output_tokens);

// The capacity of `model` on `profile` of `gpu`; FailedPrecondition saying
// why where the slice cannot hold the weights, or the GPU's table has no
// bandwidth or tensor throughput.
StatusOr<SliceCapacity> SliceOf(const LlmModel& model, const mig::GpuModel& gpu,
                                const mig::Profile& profile,
                                const EngineOptions& engine = {});

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_SLICE_MODEL_H_
