#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace migserve {
namespace {

std::atomic<int> jobs_set{0};

}  // namespace

int Jobs() {
  int set = jobs_set.load();
  if (set > 0) return set;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void SetJobs(int jobs) { jobs_set.store(std::max(0, jobs)); }

void ParallelFor(int n, const std::function<void(int)>& body) {
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next++; i < n; i = next++) body(i);
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min(Jobs(), n); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace migserve
