// Any text as a vLLM `bench serve --save-result` JSON and as an AIPerf
// profile export (import vllm-bench, import aiperf): a measurement or an
// error, never a crash; a measurement read is one the LLM measurement CSV
// writes and reads back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "llm/bench_import.h"
#include "llm/llm_measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // From the file alone, and with the GPU and profile given as flags.
  const migserve::llm::BenchImportOptions given[] = {
      {}, {"", "H100-SXM5-80GB", "3g.40gb"}};
  for (auto format : {migserve::llm::BenchFormat::kVllm,
                      migserve::llm::BenchFormat::kAiperf}) {
    for (const auto& options : given) {
      std::vector<std::string> warnings;
      auto row = migserve::llm::ImportBenchResult(format, text, "fuzz.json",
                                                  options, &warnings);
      if (!row.ok()) continue;
      std::string csv = migserve::llm::FormatLlmMeasurements({*row});
      if (!migserve::llm::ParseLlmMeasurements(csv, "fuzz.csv").ok()) {
        __builtin_trap();  // an imported row the CSV cannot hold
      }
    }
  }
  return 0;
}
