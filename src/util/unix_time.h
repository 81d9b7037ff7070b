// The wall clock as Unix time: what Prometheus keeps its samples at, and
// what the autoscaler's rounds are stamped with.
#ifndef MIGSERVE_UTIL_UNIX_TIME_H_
#define MIGSERVE_UTIL_UNIX_TIME_H_

#include <chrono>

namespace migserve {

// Seconds since the Unix epoch, now.
inline double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace migserve

#endif  // MIGSERVE_UTIL_UNIX_TIME_H_
