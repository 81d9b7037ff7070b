// SIGINT and SIGTERM as a request to stop: a long search ends at its next
// check of the clock and keeps what it found, and the command writes that
// (issue 19); a long-running command (controller, agent, router) finishes
// what it is doing and exits; a second signal exits at once with 130. One
// handler for the whole process, so that commands run one after another in
// one process (the tests) see the same request.
#ifndef MIGSERVE_UTIL_INTERRUPT_H_
#define MIGSERVE_UTIL_INTERRUPT_H_

#include <atomic>

namespace migserve {

// Installs the handlers for SIGINT and SIGTERM. The first signal makes
// Interrupted() true and says so on stderr; the second exits the process
// with 130.
void InstallInterruptHandlers();

// While one lives (on any thread), a first signal exits the process at once
// with 130, as a second does: for a step that cannot poll Interrupted() (a
// library parsing a large file) and holds nothing a stop would keep.
class QuitAtOnce {
 public:
  QuitAtOnce();
  ~QuitAtOnce();
  QuitAtOnce(const QuitAtOnce&) = delete;
  QuitAtOnce& operator=(const QuitAtOnce&) = delete;
};

// True once a signal (or RequestInterrupt) asked to stop.
bool Interrupted();

// The same request as a flag, for loops that poll one.
const std::atomic<bool>& InterruptFlag();

// Asks to stop as a first signal would (for callers and tests).
void RequestInterrupt();

// Forgets a request to stop.
void ClearInterrupt();

}  // namespace migserve

#endif  // MIGSERVE_UTIL_INTERRUPT_H_
