// Any text as a profile CSV: an error or a table, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profile/profile_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)migserve::profile::ParseProfileCsv(text, "fuzz.csv");
  return 0;
}
