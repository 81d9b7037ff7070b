// Any text as an LLM measurement CSV (llm_measurements:): rows or an
// error, never a crash; rows read are written and read back the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "llm/llm_measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = migserve::llm::ParseLlmMeasurements(text, "fuzz.csv");
  if (!rows.ok()) return 0;
  auto again = migserve::llm::ParseLlmMeasurements(
      migserve::llm::FormatLlmMeasurements(*rows), "fuzz.csv");
  if (!again.ok() || again->size() != rows->size()) __builtin_trap();
  return 0;
}
