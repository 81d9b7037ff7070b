#include "util/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace migserve {
namespace {

std::atomic<int> signals{0};
static_assert(std::atomic<int>::is_always_lock_free);

void OnSignal(int) {
  if (signals.fetch_add(1) > 0) _exit(130);
  constexpr char kMessage[] =
      "migserve: interrupted: stopping at the next check and writing the "
      "best so far (again to quit at once)\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
}

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool Interrupted() { return signals.load() > 0; }

void RequestInterrupt() { signals.fetch_add(1); }

void ClearInterrupt() { signals.store(0); }

}  // namespace migserve
