#include "llm/slice_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace migserve::llm {

double SliceCapacity::WeightReadMs(long tokens) const {
  if (experts == 0 || tokens <= 0) return shared_read_ms;
  return shared_read_ms + ExpertsTouched(experts, experts_per_token,
                                         static_cast<double>(tokens)) *
                              expert_read_ms;
}

SlicePeaks PeaksOf(const LlmModel& model, const mig::GpuModel& gpu,
                   const mig::Profile& profile) {
  // An FP8 model's matrix products run at FP8's rate where the GPU has FP8
  // tensor cores, else at BF16's (weights-only FP8, as vLLM serves it on
  // Ampere; MXFP4 experts are dequantized to BF16 on Hopper).
  const double tflops = model.dtype == "fp8" && gpu.dense_fp8_tflops > 0
                            ? gpu.dense_fp8_tflops
                            : gpu.dense_bf16_tflops;
  return {gpu.memory_bandwidth_gbs * profile.memory_slices / gpu.memory_slices,
          tflops * gpu.ComputeShare(profile)};
}

long DefaultBatchedTokens(const mig::GpuModel& gpu,
                          const mig::Profile& profile) {
  // vLLM's EngineArgs for the OpenAI API server: 8,192 on a device of 70
  // GiB or more that is not an A100, else 2,048 (docs/llm.md).
  const bool a100 = gpu.name.rfind("A100", 0) == 0;
  return profile.memory_gb >= 70 && !a100 ? 8192 : 2048;
}

StatusOr<SliceCapacity> SliceOf(const LlmModel& model, const mig::GpuModel& gpu,
                                const mig::Profile& profile,
                                const EngineOptions& engine) {
  if (gpu.memory_bandwidth_gbs <= 0 || gpu.dense_bf16_tflops <= 0) {
    return Status::FailedPrecondition(
        fmt::format("the GPU table of {} gives no memory_bandwidth_gbs or "
                    "dense_bf16_tflops (docs/llm.md)",
                    gpu.name));
  }
  constexpr double kGib = 1024.0 * 1024 * 1024;
  // The profiles' memory is what nvidia-smi shows, MiB / 1024.
  double usable =
      (engine.memory_utilization * profile.memory_gb - engine.overhead_gib) *
      kGib;
  double kv_bytes = usable - model.WeightBytes();
  if (kv_bytes < model.KvBytesPerToken()) {
    return Status::FailedPrecondition(fmt::format(
        "{} ({:.1f} GB of {} weights) does not fit {} ({:g} GiB, {:.1f} "
        "usable at memory_utilization {:g} less {:g} GiB of overhead)",
        model.name, model.WeightBytes() / 1e9, model.dtype, profile.name,
        profile.memory_gb, std::max(0.0, usable / kGib),
        engine.memory_utilization, engine.overhead_gib));
  }
  const SlicePeaks peaks = PeaksOf(model, gpu, profile);
  // ms per byte read and per floating-point operation, scaled by the
  // measurements.
  const double ms_per_byte =
      1e3 / (peaks.bandwidth_gbs * 1e9 * engine.bandwidth_efficiency) *
      engine.decode_scale;
  const double ms_per_flop = 1e3 /
                             (peaks.tflops * 1e12 * engine.compute_efficiency) *
                             engine.prefill_scale;
  SliceCapacity c;
  c.kv_tokens = static_cast<long>(kv_bytes / model.KvBytesPerToken());
  c.max_batch = engine.max_batch;
  c.max_batched_tokens = engine.max_batched_tokens == 0
                             ? DefaultBatchedTokens(gpu, profile)
                             : std::max(0, engine.max_batched_tokens);
  c.experts_per_token = model.experts_per_token;
  c.expert_read_ms = model.ExpertBytes() * ms_per_byte;
  c.experts = c.expert_read_ms > 0 ? model.experts : 0;
  c.shared_read_ms =
      (model.WeightBytes() - model.experts * model.ExpertBytes()) * ms_per_byte;
  c.kv_read_ms_per_token = model.KvBytesPerToken() * ms_per_byte;
  c.ms_per_token = model.FlopsPerToken() * ms_per_flop;
  c.ms_per_attention_pair = model.AttentionFlopsPerContextToken() * ms_per_flop;
  c.step_overhead_ms = engine.step_overhead_ms * engine.decode_scale;
  return c;
}

Saturation SaturationOf(const SliceCapacity& slice, double prompt_tokens,
                        double output_tokens) {
  Saturation s;
  double per_request = prompt_tokens + output_tokens;
  s.sequences = static_cast<int>(std::min<double>(
      slice.max_batch,
      std::floor(static_cast<double>(slice.kv_tokens) / per_request)));
  if (s.sequences <= 0) return s;
  // Each step gives every sequence its next token over its context (half
  // its output on average) and prefills the prompts of the 1 / output
  // share that finish and are replaced.
  double n = s.sequences;
  StepLoad load;
  load.decodes = s.sequences;
  load.context_tokens = std::lround(n * (prompt_tokens + output_tokens / 2));
  load.prefill_tokens = std::lround(n * prompt_tokens / output_tokens);
  load.attention_pairs = static_cast<double>(load.context_tokens) +
                         n / output_tokens * PrefillPairs(0, prompt_tokens);
  s.step_ms = slice.StepMs(load);
  s.compute_bound = slice.ComputeMs(load) > slice.MemoryMs(load);
  s.output_tokens_per_s = n * 1e3 / s.step_ms;
  return s;
}

}  // namespace migserve::llm
