// SIGINT and SIGTERM as a request to stop: a long search ends at its next
// check of the clock and keeps what it found, and the command writes that
// (issue 19); a second signal exits at once with 130.
#ifndef MIGSERVE_UTIL_INTERRUPT_H_
#define MIGSERVE_UTIL_INTERRUPT_H_

namespace migserve {

// Installs the handlers for SIGINT and SIGTERM. The first signal makes
// Interrupted() true and says on stderr that the best so far will be
// written; the second exits the process with 130.
void InstallInterruptHandlers();

// True once a signal (or RequestInterrupt) asked to stop.
bool Interrupted();

// Asks to stop as a first signal would (for callers and tests).
void RequestInterrupt();

// Forgets a request to stop.
void ClearInterrupt();

}  // namespace migserve

#endif  // MIGSERVE_UTIL_INTERRUPT_H_
