#include "util/interrupt.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace migserve {
namespace {

// A signal is one request for the whole process: optimize's Interrupted()
// and the flag the controller, agent and router poll both see it, and
// ClearInterrupt forgets it for both (when the long-running commands had a
// handler of their own, whichever was installed last took every signal).
TEST(InterruptTest, OneSignalIsSeenByEveryCommand) {
  InstallInterruptHandlers();
  ClearInterrupt();
  EXPECT_FALSE(Interrupted());
  EXPECT_FALSE(InterruptFlag().load());
  std::raise(SIGTERM);
  EXPECT_TRUE(Interrupted());
  EXPECT_TRUE(InterruptFlag().load());
  ClearInterrupt();
  EXPECT_FALSE(Interrupted());
  EXPECT_FALSE(InterruptFlag().load());
  RequestInterrupt();
  EXPECT_TRUE(InterruptFlag().load());
  ClearInterrupt();
}

// Inside a QuitAtOnce scope (a library parsing a large file, which polls
// nothing) the first signal ends the process at once with 130; outside it,
// the same signal only asks to stop.
TEST(InterruptTest, AFirstSignalQuitsAtOnceWhereNothingPolls) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InstallInterruptHandlers();
    ClearInterrupt();
    QuitAtOnce unpolled;
    std::raise(SIGTERM);
    _exit(0);  // not reached: the handler exits
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  { QuitAtOnce closed; }
  InstallInterruptHandlers();
  ClearInterrupt();
  std::raise(SIGTERM);  // after the scope closed: a request, not an exit
  EXPECT_TRUE(Interrupted());
  ClearInterrupt();
}

}  // namespace
}  // namespace migserve
