#include "kube/micro_time.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace migserve::kube {

std::string MicroTimeNow() {
  auto now = std::chrono::system_clock::now();
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    now.time_since_epoch())
                    .count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:06d}Z", text, micros % 1000000);
}

std::string TimeNow() { return MicroTimeNow().substr(0, 19) + "Z"; }

}  // namespace migserve::kube
