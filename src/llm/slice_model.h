// What one replica of a language model has on a MIG slice, from first
// principles (docs/llm.md, "Capacity per slice"): room for so many tokens
// of KV cache once the weights and the runtime's overhead are in the
// slice's memory, and the time of a continuous batcher's steps. A decode
// step reads the weights and the KV cache of every sequence in the batch,
// at the slice's share of the GPU's memory bandwidth (its memory slices);
// a prefill is compute bound, at the slice's share of the GPU's tensor
// throughput (its compute slices). Every figure is modelled unless the
// engine options carry a measurement's corrections (calibration.h).
#ifndef MIGSERVE_LLM_SLICE_MODEL_H_
#define MIGSERVE_LLM_SLICE_MODEL_H_

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
  // Shares of the slice's peak reached by a decode step's reads and by a
  // prefill's matrix products.
  double bandwidth_efficiency = 0.8;
  double compute_efficiency = 0.5;
  double step_overhead_ms = 2;  // scheduling and launches, per step
  // Measured corrections (calibration.h): a decode step's time (overhead,
  // weights and KV cache read) and a prefill's are the modelled ones times
  // these. 1: no measurement.
  double decode_scale = 1;
  double prefill_scale = 1;
};

struct SliceCapacity {
  long kv_tokens = 0;         // the KV cache's room, tokens
  int max_batch = 0;          // sequences at once
  double weight_read_ms = 0;  // a decode step's read of the weights
  double kv_read_ms_per_token = 0;
  double prefill_ms_per_token = 0;
  double step_overhead_ms = 0;

  // One step: every running sequence's next token over `context_tokens`
  // of KV cache in all, and the prompts of `prefill_tokens` admitted.
  double StepMs(long context_tokens, long prefill_tokens) const {
    return step_overhead_ms + weight_read_ms +
           kv_read_ms_per_token * static_cast<double>(context_tokens) +
           prefill_ms_per_token * static_cast<double>(prefill_tokens);
  }
};

// A replica kept full: as many sequences of `prompt_tokens` and
// `output_tokens` as the batch and the KV room hold, each step giving each
// its next token (over half its output of context, on average) and
// prefilling the prompts of those that replace the ones finishing. The
// most output tokens per second the slice makes at those lengths.
struct Saturation {
  int sequences = 0;  // 0: a request of these lengths does not fit
  double step_ms = 0;
  double output_tokens_per_s = 0;
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
