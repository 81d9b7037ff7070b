// Measurements correcting the LLM capacity model (docs/llm.md,
// "Calibration"). A measured run says what a slice gave at one request
// rate: its median time to first token and per output token. The model's
// decode step time and prefill time are scaled until the batcher
// simulation of that very run (its rate, with Poisson arrivals as vLLM's
// and AIPerf's request-rate modes send them, and its lengths) gives those
// medians. A slice measured uses its own corrections ("measured"); another
// slice of the same model and GPU the geometric mean of the measured
// slices' ("calibrated on 3g.40gb"): the kernels are the same, on fewer or
// more SMs and memory slices. Every other slice stays "modelled".
#ifndef MIGSERVE_LLM_CALIBRATION_H_
#define MIGSERVE_LLM_CALIBRATION_H_

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "llm/llm_measurement.h"
#include "llm/llm_model.h"
#include "llm/slice_model.h"
#include "mig/gpu_catalog.h"
#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::llm {

// `engine` with the decode_scale, prefill_scale and step_overhead_ms under
// which the simulation of `run` on `profile` of `gpu` gives its medians
// within 1%. The decode scale goes no lower than the slice's peak
// bandwidth (bandwidth_efficiency) and the prefill scale than its peak
// tensor rate (compute_efficiency); a TPOT faster still takes it out of
// the step overhead, down to none. FailedPrecondition naming the run
// where the slice cannot hold the model, a request of its lengths does
// not fit, the run is faster than the slice at its peaks with no overhead
// (naming that floor, the run simulated there: the same the search
// cannot go under), no scales up to 50 match (a median TTFT shorter than
// a decode step, say), or the scales found make the slice kept full more
// than 10x slower than the model.
StatusOr<EngineOptions> Calibrate(const LlmModel& model,
                                  const mig::GpuModel& gpu,
                                  const mig::Profile& profile,
                                  const LlmMeasurement& run,
                                  const EngineOptions& engine = {});

// The engine options a replica's figures come from, and what backs them:
// "modelled", "measured" or "calibrated on PROFILE[,PROFILE]".
struct Calibrated {
  EngineOptions engine;
  std::string basis = "modelled";
  bool Modelled() const { return basis == "modelled"; }
};

class Calibrations {
 public:
  Calibrations() = default;

  // Calibrates every row of `rows` (read from `source`) against `models`
  // and the GPUs of `gpus`; InvalidArgument "SOURCE:LINE: FIELD: reason"
  // for a model, GPU or profile unknown, a run the model cannot match, or
  // two runs of one slice more than 2x apart.
  static StatusOr<Calibrations> Build(const std::vector<LlmMeasurement>& rows,
                                      const LlmModelTable& models,
                                      const mig::GpuCatalog& gpus,
                                      const std::string& source);

  // Reads the LLM measurement CSV at `path` and builds from its rows.
  static StatusOr<Calibrations> Load(const std::string& path,
                                     const LlmModelTable& models,
                                     const mig::GpuCatalog& gpus);

  Calibrated For(const LlmModel& model, const mig::GpuModel& gpu,
                 const mig::Profile& profile) const;

  // Per measured (model, GPU, profile), the scales found (the geometric
  // mean of its runs') and the step overhead (their mean, ms before the
  // decode scale).
  struct Scales {
    double decode = 1, prefill = 1;
    double overhead_ms = EngineOptions{}.step_overhead_ms;
    int runs = 0;
  };
  using Key = std::tuple<std::string, std::string, std::string>;
  const std::map<Key, Scales>& slices() const { return slices_; }

 private:
  std::map<Key, Scales> slices_;
};

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_CALIBRATION_H_
