#include "llm/calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "llm/batcher_simulation.h"

namespace migserve::llm {
namespace {

constexpr int kCalibrationRequests = 2000;
// Rounds of a decode search then a prefill search (each median depends a
// little on the other's time), and simulations in one search.
constexpr int kMaxRounds = 8;
constexpr int kMaxSteps = 40;
constexpr double kWithin = 0.01;
constexpr double kMaxScale = 50;
// Two runs of one slice whose scales differ by more than this are not one
// slice's measurements (docs/llm.md, "Calibration").
constexpr double kMostApart = 2;
// A run whose times make the slice, kept full, more than this much slower
// than the model says measured something else than the slice: a shared or
// throttled GPU, an engine far from vLLM's defaults.
constexpr double kMostSlower = 10;

// The two knobs a run's medians are searched on, both logarithms. The
// decode knob x scales a step's memory time and its overhead by e^x down
// to the slice's peak bandwidth (x = log bandwidth_efficiency); below
// that the memory time stays at the peak and the overhead shrinks, to
// none at one less. The prefill knob y scales the compute time by e^y,
// down to the slice's peak tensor rate (y = log compute_efficiency). The
// lowest of both is the slice at its peaks with no overhead: the floor a
// run is refused against, and the fastest the search can go.
class Knobs {
 public:
  Knobs(const LlmModel& model, const mig::GpuModel& gpu,
        const mig::Profile& profile, const LlmMeasurement& run,
        const EngineOptions& engine)
      : model_(model), gpu_(gpu), profile_(profile), run_(run), base_(engine) {
    base_.decode_scale = base_.prefill_scale = 1;
    terms_.prompt_tokens = run.prompt_tokens;
    terms_.output_tokens = run.output_tokens;
    terms_.prompt_cv = run.prompt_cv;
    terms_.output_cv = run.output_cv;
  }

  const EngineOptions& Modelled() const { return base_; }
  double Knee() const { return std::log(base_.bandwidth_efficiency); }
  double XMin() const { return Knee() - 1; }
  double YMin() const { return std::log(base_.compute_efficiency); }
  static double Max() { return std::log(kMaxScale); }

  EngineOptions At(double x, double y) const {
    EngineOptions e = base_;
    if (x >= Knee()) {
      e.decode_scale = std::exp(x);
    } else {
      e.decode_scale = base_.bandwidth_efficiency;
      e.step_overhead_ms = base_.step_overhead_ms * (x - XMin());
    }
    e.prefill_scale = std::exp(y);
    return e;
  }

  // The run replayed in the batcher simulation at (x, y): its rate, alone
  // on the replica with Poisson arrivals, its lengths.
  StatusOr<BatcherStats> Simulate(double x, double y) const {
    if (auto it = seen_.find({x, y}); it != seen_.end()) return it->second;
    MIGSERVE_ASSIGN_OR_RETURN(SliceCapacity slice,
                              SliceOf(model_, gpu_, profile_, At(x, y)));
    BatcherStats s =
        SimulateBatcher(slice, terms_, queueing::Traffic{},
                        {run_.request_rate, kCalibrationRequests, 1});
    if (!s.fits) {
      return Status::FailedPrecondition(fmt::format(
          "a request of the run's lengths does not fit the {} KV tokens the "
          "model gives {}",
          slice.kv_tokens, profile_.name));
    }
    seen_[{x, y}] = s;
    return s;
  }

 private:
  const LlmModel& model_;
  const mig::GpuModel& gpu_;
  const mig::Profile& profile_;
  const LlmMeasurement& run_;
  EngineOptions base_;
  LlmTerms terms_;
  // What each point gave: the searches come back to their starts.
  mutable std::map<std::pair<double, double>, BatcherStats> seen_;
};

// Where an increasing `median` of one knob meets `target`: the knob, or
// below `lo` (the target is faster than the knob's floor) or above `hi`.
struct Found {
  enum Where { kAt, kBelow, kAbove } where = kAt;
  double knob = 0;
};
StatusOr<Found> Solve(const std::function<StatusOr<double>(double)>& median,
                      double lo, double hi, double start, double target,
                      double within) {
  auto gap = [&](double k) -> StatusOr<double> {
    MIGSERVE_ASSIGN_OR_RETURN(double m, median(k));
    return std::log(m / target);
  };
  double a = start;
  MIGSERVE_ASSIGN_OR_RETURN(double ga, gap(a));
  if (std::abs(ga) < within) return Found{Found::kAt, a};
  // Out from the start until the gap changes sign: a step of the gap
  // itself (a median in proportion to its scale), then as the last two
  // points' slope says, at most 2 (7.4x) at a time.
  double b = a, gb = ga, slope = 1;
  int steps = 0;
  for (;;) {
    const double step = std::clamp(-ga / std::max(slope, 0.25), -2.0, 2.0);
    b = std::clamp(a + step, lo, hi);
    if (b == a) return Found{ga > 0 ? Found::kBelow : Found::kAbove, a};
    MIGSERVE_ASSIGN_OR_RETURN(gb, gap(b));
    if (std::abs(gb) < within) return Found{Found::kAt, b};
    if (std::signbit(gb) != std::signbit(ga)) break;
    if (++steps > kMaxSteps) return Found{Found::kAt, b};
    slope = (gb - ga) / (b - a);
    a = b;
    ga = gb;
  }
  // The gap changes sign between a and b: false position, the Illinois
  // way (the end kept twice has its gap halved), to within `within` or a
  // bracket too narrow to matter (a median that jumps there).
  while (++steps <= kMaxSteps && std::abs(b - a) > 1e-4) {
    const double c = (a * gb - b * ga) / (gb - ga);
    MIGSERVE_ASSIGN_OR_RETURN(double gc, gap(c));
    if (std::abs(gc) < within) return Found{Found::kAt, c};
    if (std::signbit(gc) != std::signbit(gb)) {
      a = b;
      ga = gb;
    } else {
      ga /= 2;
    }
    b = c;
    gb = gc;
  }
  return Found{Found::kAt, std::abs(ga) < std::abs(gb) ? a : b};
}

// The refusal of a run faster than the slice at its peaks with no
// overhead (`floor`, the run simulated there), naming the bound it passes.
Status FasterThanThePeaks(const LlmModel& model, const mig::GpuModel& gpu,
                          const mig::Profile& profile,
                          const LlmMeasurement& run,
                          const BatcherStats& floor) {
  const SlicePeaks peaks = PeaksOf(model, gpu, profile);
  if (run.tpot_p50_ms < floor.tpot_p50_ms) {
    // The sequences running at once at the floor (Little's law on its
    // medians), whose tokens pick a mixture's experts.
    const double running = std::max(
        1.0,
        run.request_rate *
            (floor.ttft_p50_ms + (run.output_tokens - 1) * floor.tpot_p50_ms) /
            1e3);
    std::string weights =
        fmt::format("the {:.2f} GB of weights", model.WeightBytesRead(1) / 1e9);
    if (model.ExpertBytes() > 0) {
      weights = fmt::format(
          "{:.2f} GB of weights (the shared ones and the {:.0f} of {} experts "
          "the tokens of its about {:.0f} sequences running pick, on "
          "average)",
          model.WeightBytesRead(running) / 1e9,
          ExpertsTouched(model.experts, model.experts_per_token, running),
          model.experts, running);
    }
    return Status::FailedPrecondition(fmt::format(
        "its median TPOT of {:g} ms is faster than {} can be: at its {:g} "
        "req/s of {:g} prompt and {:g} output tokens a step reads {} and "
        "the KV cache at most at the slice's peak of {:.0f} GB/s ({} of {} "
        "memory slices of {:g}), with no overhead at least {:.2f} ms a "
        "token (the run implies {:.0f}% of that peak)",
        run.tpot_p50_ms, profile.name, run.request_rate, run.prompt_tokens,
        run.output_tokens, weights, peaks.bandwidth_gbs, profile.memory_slices,
        gpu.memory_slices, gpu.memory_bandwidth_gbs, floor.tpot_p50_ms,
        100 * floor.tpot_p50_ms / run.tpot_p50_ms));
  }
  return Status::FailedPrecondition(fmt::format(
      "its median TTFT of {:g} ms is faster than {} can be: {:g} prompt "
      "tokens take {:.3g} TFLOP, and at its {:g} req/s the slice at its "
      "peaks ({:.0f} TFLOPS, {:.0f} GB/s) with no overhead gives at least "
      "{:.2f} ms (the run implies {:.0f}% of that peak)",
      run.ttft_p50_ms, profile.name, run.prompt_tokens,
      model.FlopsPerToken() * run.prompt_tokens / 1e12, run.request_rate,
      peaks.tflops, peaks.bandwidth_gbs, floor.ttft_p50_ms,
      100 * floor.ttft_p50_ms / run.ttft_p50_ms));
}

// `found`, unless it makes the slice kept full at the run's lengths more
// than kMostSlower times slower than the model: refused naming both
// figures.
StatusOr<EngineOptions> WithinReason(const LlmModel& model,
                                     const mig::GpuModel& gpu,
                                     const mig::Profile& profile,
                                     const LlmMeasurement& run,
                                     const EngineOptions& modelled,
                                     const EngineOptions& found) {
  MIGSERVE_ASSIGN_OR_RETURN(SliceCapacity before,
                            SliceOf(model, gpu, profile, modelled));
  MIGSERVE_ASSIGN_OR_RETURN(SliceCapacity after,
                            SliceOf(model, gpu, profile, found));
  const double was = SaturationOf(before, run.prompt_tokens, run.output_tokens)
                         .output_tokens_per_s;
  const double is = SaturationOf(after, run.prompt_tokens, run.output_tokens)
                        .output_tokens_per_s;
  if (is * kMostSlower < was) {
    return Status::FailedPrecondition(fmt::format(
        "its medians make {} kept full {:.1f}x slower than the model at its "
        "lengths ({:.0f} output tokens/s against {:.0f}): more than {:g}x "
        "is not the slice's own speed; was the GPU shared or throttled, or "
        "the engine run far from vLLM's defaults?",
        profile.name, was / is, is, was, kMostSlower));
  }
  return found;
}

}  // namespace

StatusOr<EngineOptions> Calibrate(const LlmModel& model,
                                  const mig::GpuModel& gpu,
                                  const mig::Profile& profile,
                                  const LlmMeasurement& run,
                                  const EngineOptions& engine) {
  if (run.output_tokens < 2) {
    return Status::FailedPrecondition(
        "a run of one output token per request has no time per output token");
  }
  const Knobs knobs(model, gpu, profile, run, engine);
  // The floor first: a run faster than the slice at its peaks is refused
  // against the very figure the search below cannot go under.
  MIGSERVE_ASSIGN_OR_RETURN(BatcherStats floor,
                            knobs.Simulate(knobs.XMin(), knobs.YMin()));
  if (run.tpot_p50_ms < floor.tpot_p50_ms ||
      run.ttft_p50_ms < floor.ttft_p50_ms) {
    return FasterThanThePeaks(model, gpu, profile, run, floor);
  }
  auto beyond = [&] {
    return Status::FailedPrecondition(fmt::format(
        "no decode and prefill times within {:g}x of the model's give its "
        "medians (TTFT {:g} ms, TPOT {:g} ms at {:g} req/s): is the TTFT "
        "shorter than a decode step, or the rate beyond what the slice "
        "served?",
        kMaxScale, run.ttft_p50_ms, run.tpot_p50_ms, run.request_rate));
  };
  // Each search to half the tolerance, so that the other's move keeps it
  // within the whole.
  const double within = std::log1p(kWithin), half = within / 2;
  double x = std::max(0.0, knobs.Knee()), y = std::max(0.0, knobs.YMin());
  bool decode_floor = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    MIGSERVE_ASSIGN_OR_RETURN(BatcherStats s, knobs.Simulate(x, y));
    if (std::abs(std::log(s.tpot_p50_ms / run.tpot_p50_ms)) < within &&
        std::abs(std::log(s.ttft_p50_ms / run.ttft_p50_ms)) < within) {
      return WithinReason(model, gpu, profile, run, knobs.Modelled(),
                          knobs.At(x, y));
    }
    MIGSERVE_ASSIGN_OR_RETURN(
        Found decode,
        Solve(
            [&](double k) -> StatusOr<double> {
              MIGSERVE_ASSIGN_OR_RETURN(BatcherStats at, knobs.Simulate(k, y));
              return at.tpot_p50_ms;
            },
            knobs.XMin(), Knobs::Max(), x, run.tpot_p50_ms, half));
    if (decode.where == Found::kAbove) return beyond();
    decode_floor = decode.where == Found::kBelow;
    MIGSERVE_ASSIGN_OR_RETURN(
        Found prefill,
        Solve(
            [&](double k) -> StatusOr<double> {
              MIGSERVE_ASSIGN_OR_RETURN(BatcherStats at,
                                        knobs.Simulate(decode.knob, k));
              return at.ttft_p50_ms;
            },
            knobs.YMin(), Knobs::Max(), y, run.ttft_p50_ms, half));
    if (prefill.where == Found::kAbove) return beyond();
    if (decode.knob == x && prefill.knob == y) break;  // settled apart
    x = decode.knob;
    y = prefill.knob;
  }
  if (decode_floor) {
    // The TTFT asks for so slow a prefill that the TPOT, whose steps
    // carry the prompts' chunks, cannot come down to the run's.
    MIGSERVE_ASSIGN_OR_RETURN(BatcherStats s, knobs.Simulate(knobs.XMin(), y));
    return Status::FailedPrecondition(fmt::format(
        "its medians contradict each other on {}: a prefill slow enough "
        "for its TTFT of {:g} ms ({:.1f}x the model's) makes the steps that "
        "carry the prompts' chunks give a TPOT of at least {:.2f} ms at the "
        "slice's peak bandwidth with no overhead, above its {:g} ms; was "
        "the TTFT measured with a queue in front of the replica?",
        profile.name, run.ttft_p50_ms, std::exp(y), s.tpot_p50_ms,
        run.tpot_p50_ms));
  }
  return Status::FailedPrecondition(fmt::format(
      "no decode and prefill times give both its medians (TTFT {:g} ms, "
      "TPOT {:g} ms at {:g} req/s) within {:g}%",
      run.ttft_p50_ms, run.tpot_p50_ms, run.request_rate, 100 * kWithin));
}

StatusOr<Calibrations> Calibrations::Build(
    const std::vector<LlmMeasurement>& rows, const LlmModelTable& models,
    const mig::GpuCatalog& gpus, const std::string& source) {
  struct Run {
    int line = 0;
    double decode = 1, prefill = 1, overhead_ms = 0;
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
    seen.push_back(
        {run.line, e->decode_scale, e->prefill_scale, e->step_overhead_ms});
  }
  Calibrations out;
  for (const auto& [key, measured] : runs) {
    double decode = 0, prefill = 0, overhead = 0;
    for (const Run& r : measured) {
      decode += std::log(r.decode);
      prefill += std::log(r.prefill);
      overhead += r.overhead_ms;
    }
    const double n = static_cast<double>(measured.size());
    out.slices_[key] = {std::exp(decode / n), std::exp(prefill / n),
                        overhead / n, static_cast<int>(measured.size())};
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
    out.engine.step_overhead_ms = it->second.overhead_ms;
    out.basis = "measured";
    return out;
  }
  double decode = 0, prefill = 0, overhead = 0;
  std::vector<std::string> on;
  for (const auto& [key, s] : slices_) {
    if (std::get<0>(key) != model.name || std::get<1>(key) != gpu.name) {
      continue;
    }
    decode += std::log(s.decode);
    prefill += std::log(s.prefill);
    overhead += s.overhead_ms;
    on.push_back(std::get<2>(key));
  }
  if (on.empty()) return out;
  double n = static_cast<double>(on.size());
  out.engine.decode_scale = std::exp(decode / n);
  out.engine.prefill_scale = std::exp(prefill / n);
  out.engine.step_overhead_ms = overhead / n;
  out.basis = fmt::format("calibrated on {}", fmt::join(on, ","));
  return out;
}

}  // namespace migserve::llm
