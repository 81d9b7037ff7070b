// Any text as a deployment: an error or a deployment, never a crash; a
// deployment it accepts is written and read back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "deployment/deployment_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto d = migserve::deployment::ParseDeployment(text, "fuzz.json");
  if (d.ok()) {
    (void)migserve::deployment::ParseDeployment(
        migserve::deployment::FormatDeployment(*d), "again.json");
  }
  return 0;
}
