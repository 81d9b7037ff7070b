// Time limits of the searches: a deadline some seconds from now, and the
// seconds left until one.
#ifndef MIGSERVE_OPTIMIZER_DEADLINE_H_
#define MIGSERVE_OPTIMIZER_DEADLINE_H_

#include <chrono>

namespace migserve::optimizer {

using Clock = std::chrono::steady_clock;

// Returns the time `seconds` from now.
inline Clock::time_point SecondsFromNow(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// Returns the seconds until `deadline`, negative once it has passed.
inline double SecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_DEADLINE_H_
