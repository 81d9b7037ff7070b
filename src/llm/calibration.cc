#include "llm/calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "llm/batcher_simulation.h"

namespace migserve::llm {
namespace {

constexpr int kCalibrationRequests = 2000;
constexpr int kMaxRounds = 40;
constexpr double kWithin = 0.01;
constexpr double kMaxScale = 50;

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
      return e;
    }
    e.decode_scale *= decode;
    e.prefill_scale *= prefill;
    for (double scale : {e.decode_scale, e.prefill_scale}) {
      if (scale > kMaxScale || scale < 1 / kMaxScale) {
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
  struct LogSums {
    double decode = 0, prefill = 0;
    int runs = 0;
  };
  std::map<Key, LogSums> logs;
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
    LogSums& s = logs[{run.model, (*gpu)->name, profile.name}];
    s.decode += std::log(e->decode_scale);
    s.prefill += std::log(e->prefill_scale);
    ++s.runs;
  }
  Calibrations out;
  for (const auto& [key, s] : logs) {
    out.slices_[key] = {std::exp(s.decode / s.runs),
                        std::exp(s.prefill / s.runs), s.runs};
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
