// How often long runs say how far they are: a progress line on stderr at
// least every kProgressEveryS seconds (searches, serve, simulate).
#ifndef MIGSERVE_UTIL_PROGRESS_TIMER_H_
#define MIGSERVE_UTIL_PROGRESS_TIMER_H_

#include <chrono>

namespace migserve {

inline constexpr double kProgressEveryS = 2;

// Tells when the next progress line is due. Not thread-safe.
class ProgressTimer {
 public:
  explicit ProgressTimer(double every_s = kProgressEveryS)
      : every_s_(every_s) {}

  // True when `every_s` have passed since construction or the last Due()
  // that returned true.
  bool Due() {
    Clock::time_point now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < every_s_) {
      return false;
    }
    last_ = now;
    return true;
  }

 private:
  using Clock = std::chrono::steady_clock;
  double every_s_;
  Clock::time_point last_ = Clock::now();
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_PROGRESS_TIMER_H_
