// Any text as a workload: an error or a workload, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workload/workload_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)migserve::workload::ParseWorkload(text, "fuzz.yaml");
  return 0;
}
