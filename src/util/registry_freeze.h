// The process's registries (the GPU catalog, mig/gpu_catalog.h; the router
// and service kinds, util/kind_registry.h) are filled before a command
// runs (at start-up, from --gpu-table files while the flags are parsed, or
// by a test between commands) and fixed while one runs: the CLI holds a
// FreezeRegistries around every command (cli/command.h, OnRun), so every
// reader, every thread of a command included, sees one set of entries and
// an addition then is refused by name.
#ifndef MIGSERVE_UTIL_REGISTRY_FREEZE_H_
#define MIGSERVE_UTIL_REGISTRY_FREEZE_H_

#include <atomic>

namespace migserve {

// While one lives, every registry is frozen. Take it on the thread that
// fills them, before the threads that read them start.
class FreezeRegistries {
 public:
  FreezeRegistries() { ++Count(); }
  ~FreezeRegistries() { --Count(); }
  FreezeRegistries(const FreezeRegistries&) = delete;
  FreezeRegistries& operator=(const FreezeRegistries&) = delete;

  static bool Frozen() { return Count().load() > 0; }

 private:
  static std::atomic<int>& Count() {
    static std::atomic<int> count{0};
    return count;
  }
};

}  // namespace migserve

#endif  // MIGSERVE_UTIL_REGISTRY_FREEZE_H_
