#include "util/parallel.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace migserve {
namespace {

// Every index runs once, on at most Jobs() threads.
TEST(ParallelTest, RunsEveryIndexOnceOnAtMostJobsThreads) {
  for (int jobs : {1, 3}) {
    SetJobs(jobs);
    EXPECT_EQ(Jobs(), jobs);
    std::mutex mu;
    std::vector<int> runs(200, 0);
    std::set<std::thread::id> threads;
    ParallelFor(200, [&](int i) {
      std::lock_guard lock(mu);
      ++runs[i];
      threads.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(runs, std::vector<int>(200, 1));
    EXPECT_LE(static_cast<int>(threads.size()), jobs);
  }
  SetJobs(0);
  EXPECT_EQ(Jobs(), static_cast<int>(
                        std::max(1u, std::thread::hardware_concurrency())));
  ParallelFor(0, [](int) { FAIL(); });
}

}  // namespace
}  // namespace migserve
