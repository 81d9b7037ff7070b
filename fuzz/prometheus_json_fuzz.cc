// Any text as a Prometheus query_range answer: an error or series, never a
// crash or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "autoscale/prometheus_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)migserve::autoscale::ParseQueryRange(text, 200);
  (void)migserve::autoscale::ParseQueryRange(text, 400);
  return 0;
}
