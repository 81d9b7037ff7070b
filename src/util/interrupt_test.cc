#include "util/interrupt.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace migserve
