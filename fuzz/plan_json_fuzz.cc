// Any text as a transition plan: an error or a plan, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/plan_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = migserve::cluster::ParsePlan(text, "fuzz.json");
  if (plan.ok()) (void)migserve::cluster::FormatPlan(*plan);
  return 0;
}
