// A mutex that clang's thread-safety analysis sees (-Wthread-safety in
// every clang build: CI's `make asan`), and the annotations that say what it
// guards. libstdc++'s std::mutex carries no capability attributes, so the
// analysis cannot follow it; this wrapper is the one place that adds them.
// Under GCC the annotations are empty.
#ifndef MIGSERVE_UTIL_MUTEX_H_
#define MIGSERVE_UTIL_MUTEX_H_

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define MIGSERVE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define MIGSERVE_THREAD_ANNOTATION(x)
#endif

// A member only read or written with `mu` held.
#define GUARDED_BY(mu) MIGSERVE_THREAD_ANNOTATION(guarded_by(mu))
// A function its callers call with `mu` held.
#define REQUIRES(...) \
  MIGSERVE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A function its callers call without `mu` held (it takes it).
#define EXCLUDES(...) MIGSERVE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// A function the analysis does not check: it reads guarded members without
// their mutex for a reason its comment gives (nothing can write them then).
#define NO_THREAD_SAFETY_ANALYSIS \
  MIGSERVE_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace migserve {

class MIGSERVE_THREAD_ANNOTATION(capability("mutex")) Mutex {
 public:
  void Lock() MIGSERVE_THREAD_ANNOTATION(acquire_capability()) { mu_.lock(); }
  void Unlock() MIGSERVE_THREAD_ANNOTATION(release_capability()) {
    mu_.unlock();
  }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction (but between Unlock and
// Lock); Wait and WaitUntil give it up while they wait on a condition
// variable, as std::unique_lock does.
// They take no predicate (a lambda reading guarded members is a function
// of its own to the analysis, which cannot see the lock held): loop on the
// condition in the caller.
class MIGSERVE_THREAD_ANNOTATION(scoped_lockable) MutexLock {
 public:
  explicit MutexLock(Mutex* mu)
      MIGSERVE_THREAD_ANNOTATION(acquire_capability(mu))
      : lock_(mu->mu_) {}
  ~MutexLock() MIGSERVE_THREAD_ANNOTATION(release_capability()) = default;

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Gives the mutex up before the scope ends, and takes it again.
  void Unlock() MIGSERVE_THREAD_ANNOTATION(release_capability()) {
    lock_.unlock();
  }
  void Lock() MIGSERVE_THREAD_ANNOTATION(acquire_capability()) { lock_.lock(); }

  // Waits until `cv` is notified (or wakes spuriously).
  void Wait(std::condition_variable* cv) { cv->wait(lock_); }
  // The same, or until `deadline`; false once it has passed.
  template <typename TimePoint>
  bool WaitUntil(std::condition_variable* cv, const TimePoint& deadline) {
    return cv->wait_until(lock_, deadline) == std::cv_status::no_timeout;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_MUTEX_H_
