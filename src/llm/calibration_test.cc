// Calibration: a run made by the simulator under known corrections gives
// those corrections back; a measured slice, a sibling slice of the same
// GPU and another GPU get the bases docs/llm.md names; the measurement CSV
// reads back what it writes and names the line and column of an error.
#include "llm/calibration.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "llm/batcher_simulation.h"
#include "llm/llm_measurement.h"
#include "mig/testing/gpus.h"
#include "util/test_util.h"

namespace migserve::llm {
namespace {

const mig::Profile& H100Profile(const char* name) {
  return migserve::testing::H100()
      .profiles[migserve::testing::H100().FindProfile(name)];
}

// What a run at `rate` of `prompt` and `output` tokens measures on
// `profile` of `gpu` where the true times are the model's under `truth`.
LlmMeasurement Measure(const char* model_name, const mig::GpuModel& gpu,
                       const char* profile, double rate,
                       const EngineOptions& truth, double prompt = 1024,
                       double output = 256) {
  const LlmModel& model = *ShippedLlmModels().Find(model_name).value();
  SliceCapacity slice =
      SliceOf(model, gpu, gpu.profiles[gpu.FindProfile(profile)], truth)
          .value();
  LlmMeasurement m;
  m.model = model_name;
  m.gpu = gpu.name;
  m.profile = profile;
  m.request_rate = rate;
  m.prompt_tokens = prompt;
  m.output_tokens = output;
  LlmTerms terms;
  terms.prompt_tokens = m.prompt_tokens;
  terms.output_tokens = m.output_tokens;
  BatcherStats s = SimulateBatcher(slice, terms, {}, {rate, 2000, 1});
  m.ttft_p50_ms = s.ttft_p50_ms;
  m.tpot_p50_ms = s.tpot_p50_ms;
  m.output_tokens_per_s = s.output_tokens_per_s;
  return m;
}

// Llama-3.1-8B on the H100's `profile`, its times the model's x `decode`
// and x `prefill`.
LlmMeasurement RunUnder(const char* profile, double rate, double decode,
                        double prefill) {
  EngineOptions truth;
  truth.decode_scale = decode;
  truth.prefill_scale = prefill;
  return Measure("llama-3.1-8b", migserve::testing::H100(), profile, rate,
                 truth);
}

TEST(CalibrationTest, ARunUnderKnownCorrectionsGivesThemBack) {
  const LlmModel& model = *ShippedLlmModels().Find("llama-3.1-8b").value();
  for (auto [decode, prefill] :
       {std::pair{1.0, 1.0}, std::pair{1.4, 0.6}, std::pair{0.9, 2.5}}) {
    LlmMeasurement run = RunUnder("3g.40gb", 2, decode, prefill);
    auto e = Calibrate(model, migserve::testing::H100(), H100Profile("3g.40gb"),
                       run);
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_NEAR(e->decode_scale, decode, 0.03 * decode);
    EXPECT_NEAR(e->prefill_scale, prefill, 0.05 * prefill);
  }
}

// A TTFT a hundredth of a step drives the prefill scale out of range:
// refused naming the slice's peak it would pass.
TEST(CalibrationTest, ATtftShorterThanAnyStepIsRefusedWithTheReason) {
  const LlmModel& model = *ShippedLlmModels().Find("llama-3.1-8b").value();
  LlmMeasurement run = RunUnder("3g.40gb", 2, 1, 1);
  run.ttft_p50_ms = run.tpot_p50_ms / 100;
  auto e =
      Calibrate(model, migserve::testing::H100(), H100Profile("3g.40gb"), run);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("is faster than 3g.40gb can be: 1024 "
                                      "prompt tokens take 16.4 TFLOP"),
            std::string::npos)
      << e.status().message();
}

TEST(CalibrationTest, EachSliceSaysWhatBacksIt) {
  std::vector<LlmMeasurement> rows = {RunUnder("3g.40gb", 2, 1.5, 0.8),
                                      RunUnder("3g.40gb", 4, 1.5, 0.8)};
  rows[0].line = 2;
  rows[1].line = 3;
  auto c = Calibrations::Build(rows, ShippedLlmModels(),
                               mig::GpuCatalog::Default(), "runs.csv");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->slices().size(), 1u);
  EXPECT_EQ(c->slices().begin()->second.runs, 2);
  const LlmModel& llama = *ShippedLlmModels().Find("llama-3.1-8b").value();
  Calibrated measured =
      c->For(llama, migserve::testing::H100(), H100Profile("3g.40gb"));
  EXPECT_EQ(measured.basis, "measured");
  EXPECT_NEAR(measured.engine.decode_scale, 1.5, 0.05);
  Calibrated sibling =
      c->For(llama, migserve::testing::H100(), H100Profile("7g.80gb"));
  EXPECT_EQ(sibling.basis, "calibrated on 3g.40gb");
  EXPECT_DOUBLE_EQ(sibling.engine.decode_scale, measured.engine.decode_scale);
  const auto& a100 = migserve::testing::A100();
  Calibrated other = c->For(llama, a100, a100.profiles[0]);
  EXPECT_TRUE(other.Modelled());
  EXPECT_EQ(other.engine.decode_scale, 1);
  const LlmModel& qwen = *ShippedLlmModels().Find("qwen2.5-7b").value();
  EXPECT_TRUE(c->For(qwen, migserve::testing::H100(), H100Profile("3g.40gb"))
                  .Modelled());

  rows[1].model = "llama-9";
  auto bad = Calibrations::Build(rows, ShippedLlmModels(),
                                 mig::GpuCatalog::Default(), "runs.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().message().starts_with("runs.csv:3: model: "))
      << bad.status().message();
}

// A run claiming a 1 ms TPOT for an 8B BF16 model on an A100's 2g.20gb
// (a step reads 16.06 GB at no more than 2 of 8 memory slices of 2,039
// GB/s: 31.5 ms) is refused naming that bound, as a TTFT claiming more
// than the slice's peak tensor rate is.
TEST(CalibrationTest, ARunFasterThanTheSlicesPeakIsRefusedNamingTheBound) {
  const LlmModel& model = *ShippedLlmModels().Find("llama-3.1-8b").value();
  const mig::GpuModel& a100 = migserve::testing::A100();
  const mig::Profile& g2 = a100.profiles[a100.FindProfile("2g.20gb")];
  LlmMeasurement run;
  run.model = "llama-3.1-8b";
  run.gpu = a100.name;
  run.profile = "2g.20gb";
  run.request_rate = 0.1;
  run.prompt_tokens = 512;
  run.output_tokens = 128;
  run.ttft_p50_ms = 200;
  run.tpot_p50_ms = 1;
  auto e = Calibrate(model, a100, g2, run);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find(
                "its median TPOT of 1 ms is faster than 2g.20gb can be: at "
                "its 0.1 req/s of 512 prompt and 128 output tokens a step "
                "reads the 16.06 GB of weights and the KV cache at most at "
                "the slice's peak of 510 GB/s (2 of 8 memory slices of "
                "2039), with no overhead at least 31.69 ms a token"),
            std::string::npos)
      << e.status().message();
  run.tpot_p50_ms = 60;
  // 512 tokens x 16.06 GFLOP at the slice's peak of 81 TFLOPS: 101.65
  // ms, and the weights read once more for them.
  run.ttft_p50_ms = 10;
  e = Calibrate(model, a100, g2, run);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find(
                "its median TTFT of 10 ms is faster than 2g.20gb can be: 512 "
                "prompt tokens take 8.22 TFLOP, and at its 0.1 req/s the "
                "slice at its peaks (81 TFLOPS, 510 GB/s) with no overhead "
                "gives at least 102.51 ms"),
            std::string::npos)
      << e.status().message();
}

// Two runs of one slice 5x apart are not one slice's: refused naming both
// lines, not averaged.
TEST(CalibrationTest, RunsOfOneSliceFarApartAreRefused) {
  std::vector<LlmMeasurement> rows = {RunUnder("3g.40gb", 0.5, 1, 1),
                                      RunUnder("3g.40gb", 0.5, 5, 1)};
  rows[0].line = 2;
  rows[1].line = 3;
  auto c = Calibrations::Build(rows, ShippedLlmModels(),
                               mig::GpuCatalog::Default(), "runs.csv");
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(
      c.status().message().starts_with("runs.csv:3: row: its decode time is "))
      << c.status().message();
  EXPECT_NE(c.status().message().find("x line 2's on the same slice"),
            std::string::npos);
}

// The floor a refusal prints ("at least X ms"), from its message.
double PrintedFloor(const Status& refusal) {
  const std::string& m = refusal.message();
  const size_t at = m.find("at least ");
  EXPECT_NE(at, std::string::npos) << m;
  return at == std::string::npos ? 0 : std::stod(m.substr(at + 9));
}

// A run just above the floor its refusal printed calibrates: the floor
// refused against is the one the search can reach (the slice at its
// peaks, the overhead gone), for a dense model and a mixture, at a low
// rate and a busy one. Its memory then runs at the slice's peak and the
// rest of the TPOT is overhead.
TEST(CalibrationTest, ARunAboveItsPrintedFloorCalibrates) {
  const auto& a100 = migserve::testing::A100();
  const auto& h200 = *mig::GpuCatalog::Default().Find("H200-141GB").value();
  for (auto [name, gpu, profile, rate] :
       {std::tuple{"llama-3.1-8b", &a100, "2g.20gb", 0.1},
        std::tuple{"qwen3-30b-a3b-fp8", &h200, "3g.71gb", 0.5},
        std::tuple{"qwen3-30b-a3b-fp8", &h200, "3g.71gb", 4.0}}) {
    SCOPED_TRACE(fmt::format("{} on {} at {} req/s", name, profile, rate));
    const LlmModel& model = *ShippedLlmModels().Find(name).value();
    const mig::Profile& p = gpu->profiles[gpu->FindProfile(profile)];
    LlmMeasurement run = Measure(name, *gpu, profile, rate, {});
    const double ttft = run.ttft_p50_ms;
    run.tpot_p50_ms = run.ttft_p50_ms = 0.01;
    auto e = Calibrate(model, *gpu, p, run);
    ASSERT_FALSE(e.ok());
    run.tpot_p50_ms = 1.02 * PrintedFloor(e.status());
    e = Calibrate(model, *gpu, p, run);
    ASSERT_FALSE(e.ok());
    ASSERT_NE(e.status().message().find("its median TTFT"), std::string::npos)
        << e.status().message();
    const double ttft_floor = PrintedFloor(e.status());
    EXPECT_LT(ttft_floor, ttft);
    run.ttft_p50_ms = 1.02 * ttft_floor;
    e = Calibrate(model, *gpu, p, run);
    ASSERT_TRUE(e.ok()) << e.status().message();
    EXPECT_DOUBLE_EQ(e->decode_scale, EngineOptions{}.bandwidth_efficiency);
    EXPECT_LT(e->step_overhead_ms, 0.5 * EngineOptions{}.step_overhead_ms);
  }
}

// A mixture's step reads the experts its batch's tokens pick, more as
// the batch grows: runs from a few sequences to a full batch, made under
// one set of corrections, each give its decode scale back (and the step
// overhead where the memory runs at its peak), the prefill scale where
// prefill shows in the TTFT (a busy replica's TTFT is mostly its queue),
// and together one set that gives every run's TPOT within 5% and TTFT
// within 10% (the issue asked 15% across concurrency).
TEST(CalibrationTest, AMixturesRunsAtEveryConcurrencyFitOneSet) {
  const auto& h200 = *mig::GpuCatalog::Default().Find("H200-141GB").value();
  const LlmModel& model = *ShippedLlmModels().Find("qwen3-30b-a3b-fp8").value();
  const mig::Profile& p = h200.profiles[h200.FindProfile("3g.71gb")];
  EngineOptions slower;
  slower.decode_scale = 1.3;
  slower.prefill_scale = 0.8;
  EngineOptions leaner;  // memory at the peak, 0.5 ms of overhead
  leaner.decode_scale = leaner.bandwidth_efficiency;
  leaner.step_overhead_ms = 0.5;
  for (const EngineOptions& truth : {slower, leaner}) {
    std::vector<LlmMeasurement> runs;
    for (double rate : {0.25, 2.0, 8.0, 16.0}) {
      SCOPED_TRACE(
          fmt::format("decode {} at {} req/s", truth.decode_scale, rate));
      runs.push_back(Measure("qwen3-30b-a3b-fp8", h200, "3g.71gb", rate, truth,
                             4000, 300));
      runs.back().line = static_cast<int>(runs.size()) + 1;
      auto e = Calibrate(model, h200, p, runs.back());
      ASSERT_TRUE(e.ok()) << e.status().message();
      EXPECT_NEAR(e->decode_scale, truth.decode_scale,
                  0.03 * truth.decode_scale);
      EXPECT_NEAR(e->step_overhead_ms, truth.step_overhead_ms, 0.25);
      if (rate <= 2) {
        EXPECT_NEAR(e->prefill_scale, truth.prefill_scale,
                    0.05 * truth.prefill_scale);
      }
    }
    auto c = Calibrations::Build(runs, ShippedLlmModels(),
                                 mig::GpuCatalog::Default(), "runs.csv");
    ASSERT_TRUE(c.ok()) << c.status().message();
    const EngineOptions one = c->For(model, h200, p).engine;
    for (const LlmMeasurement& run : runs) {
      SCOPED_TRACE(fmt::format("{} req/s under one set", run.request_rate));
      LlmMeasurement again = Measure("qwen3-30b-a3b-fp8", h200, "3g.71gb",
                                     run.request_rate, one, 4000, 300);
      EXPECT_NEAR(again.tpot_p50_ms, run.tpot_p50_ms, 0.05 * run.tpot_p50_ms);
      EXPECT_NEAR(again.ttft_p50_ms, run.ttft_p50_ms, 0.10 * run.ttft_p50_ms);
    }
  }
}

// Times that would make the slice kept full more than 10x slower than
// the model are not the slice's: refused naming both figures.
TEST(CalibrationTest, ARunTenTimesSlowerThanTheModelIsRefused) {
  const LlmModel& model = *ShippedLlmModels().Find("llama-3.1-8b").value();
  auto e = Calibrate(model, migserve::testing::H100(), H100Profile("3g.40gb"),
                     RunUnder("3g.40gb", 0.1, 12, 12));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("kept full 1"), std::string::npos)
      << e.status().message();
  EXPECT_NE(e.status().message().find("x slower than the model at its "
                                      "lengths"),
            std::string::npos)
      << e.status().message();
  e = Calibrate(model, migserve::testing::H100(), H100Profile("3g.40gb"),
                RunUnder("3g.40gb", 0.1, 6, 6));
  EXPECT_TRUE(e.ok()) << e.status().message();
}

TEST(LlmMeasurementTest, TheCsvReadsBackWhatItWritesAndNamesErrors) {
  std::vector<LlmMeasurement> rows = {RunUnder("2g.20gb", 0.5, 1, 1)};
  rows[0].source = "runs/a b.json";
  rows[0].prompt_cv = 0.5;
  std::string csv = FormatLlmMeasurements(rows);
  auto back = ParseLlmMeasurements(csv, "m.csv");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].line, 2);
  EXPECT_EQ((*back)[0].source, "runs/a b.json");
  EXPECT_EQ((*back)[0].prompt_cv, 0.5);
  EXPECT_NEAR((*back)[0].tpot_p50_ms, rows[0].tpot_p50_ms,
              1e-5 * rows[0].tpot_p50_ms);

  auto bad = ParseLlmMeasurements(
      "model,gpu,profile,request_rate,prompt_tokens,output_tokens,"
      "ttft_p50_ms,tpot_p50_ms,output_tokens_per_s\n"
      "llama-3.1-8b,H100,3g.40gb,2,1024,256,-5,30,900\n",
      "m.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().message().starts_with("m.csv:2: ttft_p50_ms: "))
      << bad.status().message();
  auto missing = ParseLlmMeasurements("model,gpu,profile\nx,y,z\n", "m.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("request_rate"), std::string::npos);
  // A file past the limit is refused at once, naming it (issue 92: 5,000
  // rows calibrated for minutes).
  std::vector<LlmMeasurement> many(kMaxLlmMeasurementRows + 1, rows[0]);
  auto too_many = ParseLlmMeasurements(FormatLlmMeasurements(many), "m.csv");
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().message(),
            "m.csv: 1001 runs; a measurement file holds at most 1000 (a few "
            "lengths and rates per model and slice calibrate it)");
  many.pop_back();
  EXPECT_TRUE(ParseLlmMeasurements(FormatLlmMeasurements(many), "m.csv").ok());
}

}  // namespace
}  // namespace migserve::llm
