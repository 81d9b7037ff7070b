// Work spread over threads, and how many a command may use (`--jobs`).
#ifndef MIGSERVE_UTIL_PARALLEL_H_
#define MIGSERVE_UTIL_PARALLEL_H_

#include <functional>

namespace migserve {

// The threads a command may use for work it spreads (`--jobs`): every
// core unless set. SetJobs(0) restores that.
int Jobs();
void SetJobs(int jobs);

// Calls body(i) for every i in [0, n) on up to Jobs() threads (the caller's
// among them) and returns when all have returned. Indexes are handed out in
// order; `body` must be safe to run concurrently for different i.
void ParallelFor(int n, const std::function<void(int)>& body);

}  // namespace migserve

#endif  // MIGSERVE_UTIL_PARALLEL_H_
