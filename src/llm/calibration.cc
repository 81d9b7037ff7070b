#include "llm/calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "llm/batcher_simulation.h"

namespace migserve::llm {
namespace {

constexpr int kCalibrationRequests = 2000;
constexpr int kMaxRounds = 40;
constexpr double kWithin = 0.01;
constexpr double kMaxScale = 50;
// Two runs of one slice whose scales differ by more than this are not one
// slice's measurements (docs/llm.md, "Calibration").
constexpr double kMostApart = 2;

// A run's scales may not make the slice faster than its peaks: the memory
// time (the weights read at the slice's peak bandwidth) and the compute
// time (the tokens' products at its peak tensor rate) are floors.
Status CheckFloor(const LlmModel& model, const mig::GpuModel& gpu,
                  const mig::Profile& profile, const LlmMeasurement& run,
                  const EngineOptions& e) {
  const SlicePeaks peaks = PeaksOf(model, gpu, profile);
  if (e.decode_scale < e.bandwidth_efficiency) {
    return Status::FailedPrecondition(fmt::format(
        "its median TPOT of {:g} ms is faster than {} can be: a step reads "
        "the {:.2f} GB of weights at most at the slice's peak of {:.0f} "
        "GB/s ({} of {} memory slices of {:g}), at least {:.2f} ms a token "
        "(the run implies {:.0f}% of that peak)",
        run.tpot_p50_ms, profile.name, model.WeightBytesRead(1) / 1e9,
        peaks.bandwidth_gbs, profile.memory_slices, gpu.memory_slices,
        gpu.memory_bandwidth_gbs,
        model.WeightBytesRead(1) / (peaks.bandwidth_gbs * 1e9) * 1e3,
        100 * e.bandwidth_efficiency / e.decode_scale));
  }
  if (e.prefill_scale < e.compute_efficiency) {
    return Status::FailedPrecondition(fmt::format(
        "its median TTFT of {:g} ms is faster than {} can be: {:g} prompt "
        "tokens take {:.3g} TFLOP, at least {:.2f} ms at the slice's peak "
        "of {:.0f} TFLOPS (the run implies {:.0f}% of that peak)",
        run.ttft_p50_ms, profile.name, run.prompt_tokens,
        model.FlopsPerToken() * run.prompt_tokens / 1e12,
        model.FlopsPerToken() * run.prompt_tokens / (peaks.tflops * 1e12) * 1e3,
        peaks.tflops, 100 * e.compute_efficiency / e.prefill_scale));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<EngineOptions> Calibrate(const LlmModel& model,
                                  const mig::GpuModel& gpu,
                                  const mig::Profile& profile,
                                  const LlmMeasurement& run,
                                  const EngineOptions& engine) {
  EngineOptions e = engine;
  e.decode_scale = e.prefill_scale = 1;
  if (run.output_tokens < 2) {
    return Status::FailedPrecondition(
        "a run of one output token per request has no time per output token");
  }
  LlmTerms terms;
  terms.prompt_tokens = run.prompt_tokens;
  terms.output_tokens = run.output_tokens;
  terms.prompt_cv = run.prompt_cv;
  terms.output_cv = run.output_cv;
  const queueing::Traffic poisson;  // the replica alone, gaps of cv 1
  for (int round = 0; round < kMaxRounds; ++round) {
    MIGSERVE_ASSIGN_OR_RETURN(SliceCapacity slice,
                              SliceOf(model, gpu, profile, e));
    BatcherStats s = SimulateBatcher(
        slice, terms, poisson, {run.request_rate, kCalibrationRequests, 1});
    if (!s.fits) {
      return Status::FailedPrecondition(fmt::format(
          "a request of the run's lengths does not fit the {} KV tokens the "
          "model gives {}",
          slice.kv_tokens, profile.name));
    }
    double decode = run.tpot_p50_ms / s.tpot_p50_ms;
    double prefill = run.ttft_p50_ms / s.ttft_p50_ms;
    if (std::abs(decode - 1) < kWithin && std::abs(prefill - 1) < kWithin) {
      MIGSERVE_RETURN_IF_ERROR(CheckFloor(model, gpu, profile, run, e));
      return e;
    }
    e.decode_scale *= decode;
    e.prefill_scale *= prefill;
    for (double scale : {e.decode_scale, e.prefill_scale}) {
      if (scale > kMaxScale || scale < 1 / kMaxScale) {
        // Scales driven below their floor: the run claims more than the
        // slice's peak, which says more than "no match".
        MIGSERVE_RETURN_IF_ERROR(CheckFloor(model, gpu, profile, run, e));
        return Status::FailedPrecondition(fmt::format(
            "no decode and prefill times within 50x of the model's give "
            "its medians (TTFT {:g} ms, TPOT {:g} ms at {:g} req/s): is the "
            "TTFT shorter than a decode step, or the rate beyond what the "
            "slice served?",
            run.ttft_p50_ms, run.tpot_p50_ms, run.request_rate));
      }
    }
  }
  return Status::FailedPrecondition(fmt::format(
      "the calibration of the run did not settle in {} rounds", kMaxRounds));
}

StatusOr<Calibrations> Calibrations::Build(
    const std::vector<LlmMeasurement>& rows, const LlmModelTable& models,
    const mig::GpuCatalog& gpus, const std::string& source) {
  struct Run {
    int line = 0;
    double decode = 1, prefill = 1;
  };
  std::map<Key, std::vector<Run>> runs;
  for (const LlmMeasurement& run : rows) {
    auto error = [&](std::string_view field, std::string_view why) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: {}: {}", source, run.line, field, why));
    };
    StatusOr<const LlmModel*> model = models.Find(run.model);
    if (!model.ok()) return error("model", model.status().message());
    StatusOr<const mig::GpuModel*> gpu = gpus.Find(run.gpu);
    if (!gpu.ok()) return error("gpu", gpu.status().message());
    int p = (*gpu)->FindProfile(run.profile);
    if (p < 0) {
      return error("profile",
                   (*gpu)->CanonicalProfile(run.profile).status().message());
    }
    const mig::Profile& profile = (*gpu)->profiles[p];
    StatusOr<EngineOptions> e = Calibrate(**model, **gpu, profile, run);
    if (!e.ok()) return error("row", e.status().message());
    std::vector<Run>& seen = runs[{run.model, (*gpu)->name, profile.name}];
    for (const Run& other : seen) {
      for (auto [what, mine, theirs] :
           {std::tuple{"decode", e->decode_scale, other.decode},
            std::tuple{"prefill", e->prefill_scale, other.prefill}}) {
        const double apart = std::max(mine / theirs, theirs / mine);
        if (apart <= kMostApart) continue;
        return error(
            "row",
            fmt::format("its {} time is {:.1f}x line {}'s on the same slice "
                        "({} of {} {}): runs more than {:g}x apart are not "
                        "one slice's; measure again or keep one",
                        what, apart, other.line, run.model, (*gpu)->name,
                        profile.name, kMostApart));
      }
    }
    seen.push_back({run.line, e->decode_scale, e->prefill_scale});
  }
  Calibrations out;
  for (const auto& [key, measured] : runs) {
    double decode = 0, prefill = 0;
    for (const Run& r : measured) {
      decode += std::log(r.decode);
      prefill += std::log(r.prefill);
    }
    const double n = static_cast<double>(measured.size());
    out.slices_[key] = {std::exp(decode / n), std::exp(prefill / n),
                        static_cast<int>(measured.size())};
  }
  return out;
}

StatusOr<Calibrations> Calibrations::Load(const std::string& path,
                                          const LlmModelTable& models,
                                          const mig::GpuCatalog& gpus) {
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<LlmMeasurement> rows,
                            LoadLlmMeasurements(path));
  return Build(rows, models, gpus, path);
}

Calibrated Calibrations::For(const LlmModel& model, const mig::GpuModel& gpu,
                             const mig::Profile& profile) const {
  Calibrated out;
  if (auto it = slices_.find({model.name, gpu.name, profile.name});
      it != slices_.end()) {
    out.engine.decode_scale = it->second.decode;
    out.engine.prefill_scale = it->second.prefill;
    out.basis = "measured";
    return out;
  }
  double decode = 0, prefill = 0;
  std::vector<std::string> on;
  for (const auto& [key, s] : slices_) {
    if (std::get<0>(key) != model.name || std::get<1>(key) != gpu.name) {
      continue;
    }
    decode += std::log(s.decode);
    prefill += std::log(s.prefill);
    on.push_back(std::get<2>(key));
  }
  if (on.empty()) return out;
  double n = static_cast<double>(on.size());
  out.engine.decode_scale = std::exp(decode / n);
  out.engine.prefill_scale = std::exp(prefill / n);
  out.basis = fmt::format("calibrated on {}", fmt::join(on, ","));
  return out;
}

}  // namespace migserve::llm
