#include "util/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace migserve {
namespace {

std::atomic<int> signals{0};
std::atomic<bool> stop{false};
std::atomic<int> quit_at_once{0};  // QuitAtOnce scopes open
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

void OnSignal(int) {
  if (signals.fetch_add(1) > 0 || quit_at_once.load() > 0) _exit(130);
  stop.store(true);
  constexpr char kMessage[] =
      "migserve: interrupted: stopping at the next check (again to quit at "
      "once)\n";
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

QuitAtOnce::QuitAtOnce() { quit_at_once.fetch_add(1); }

QuitAtOnce::~QuitAtOnce() { quit_at_once.fetch_sub(1); }

bool Interrupted() { return signals.load() > 0; }

const std::atomic<bool>& InterruptFlag() { return stop; }

void RequestInterrupt() {
  signals.fetch_add(1);
  stop.store(true);
}

void ClearInterrupt() {
  signals.store(0);
  stop.store(false);
}

}  // namespace migserve
