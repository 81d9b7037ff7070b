#include "llm/slice_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace migserve::llm {

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
  double bandwidth = gpu.memory_bandwidth_gbs * 1e9 * profile.memory_slices /
                     gpu.memory_slices * engine.bandwidth_efficiency;
  // An FP8 model's matrix products run at FP8's rate where the GPU has FP8
  // tensor cores, else at BF16's (weights-only FP8).
  const double tflops = model.dtype == "fp8" && gpu.dense_fp8_tflops > 0
                            ? gpu.dense_fp8_tflops
                            : gpu.dense_bf16_tflops;
  double flops = tflops * 1e12 * profile.compute_slices / gpu.compute_slices *
                 engine.compute_efficiency;
  SliceCapacity c;
  c.kv_tokens = static_cast<long>(kv_bytes / model.KvBytesPerToken());
  c.max_batch = engine.max_batch;
  const double decode = engine.decode_scale;
  c.weight_read_ms = model.WeightBytes() / bandwidth * 1e3 * decode;
  c.kv_read_ms_per_token = model.KvBytesPerToken() / bandwidth * 1e3 * decode;
  c.prefill_ms_per_token =
      model.FlopsPerToken() / flops * 1e3 * engine.prefill_scale;
  c.step_overhead_ms = engine.step_overhead_ms * decode;
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
  double n = s.sequences;
  s.step_ms = slice.StepMs(std::lround(n * (prompt_tokens + output_tokens / 2)),
                           std::lround(n * prompt_tokens / output_tokens));
  s.output_tokens_per_s = n * 1e3 / s.step_ms;
  return s;
}

}  // namespace migserve::llm
