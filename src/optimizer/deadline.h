// Time limits of the searches: a deadline some seconds from now, and the
// seconds left until one. An interrupt (util/interrupt.h) ends every
// deadline at once, so that each search stops at its next check and keeps
// what it found.
#ifndef MIGSERVE_OPTIMIZER_DEADLINE_H_
#define MIGSERVE_OPTIMIZER_DEADLINE_H_

#include <chrono>

#include "util/interrupt.h"
#include "util/progress_timer.h"

namespace migserve::optimizer {

using Clock = std::chrono::steady_clock;

// Returns the time `seconds` from now.
inline Clock::time_point SecondsFromNow(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// Returns the seconds since `begin`.
inline double SecondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// Returns the seconds until `deadline`, <= 0 once it has passed or a stop
// was asked for.
inline double SecondsLeft(Clock::time_point deadline) {
  if (Interrupted()) return 0;
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

}  // namespace migserve::optimizer

#endif  // MIGSERVE_OPTIMIZER_DEADLINE_H_
