// The process's heap kept for reuse: memory it frees stays in the process
// for its next allocations instead of going back to the kernel at once.
//
// CBC frees and allocates its LU factorization's arrays at every strong
// branching probe; glibc's default trims the heap's top on each such free,
// so a 3-second MILP solve made 133,000 brk calls, each followed by fresh
// zeroed pages, and spent most of its time in the kernel
// (docs/benchmarks.md, "The heap kept for CBC").
#ifndef MIGSERVE_UTIL_HEAP_H_
#define MIGSERVE_UTIL_HEAP_H_

#include <cstddef>

namespace migserve {

// What KeepFreedHeap sets: the heap keeps up to kHeapTrimBytes free at its
// top (and grows kHeapPadBytes past each request); only allocations of
// kHeapMmapBytes or more get pages of their own, given back when freed.
inline constexpr size_t kHeapTrimBytes = size_t{64} << 20;
inline constexpr size_t kHeapPadBytes = size_t{16} << 20;
inline constexpr size_t kHeapMmapBytes = size_t{32} << 20;

// Sets glibc's allocator as above, once per process (later calls do
// nothing); thread-safe. Every way into CBC calls it. Under a sanitizer's
// allocator, which ignores these settings, it changes nothing.
void KeepFreedHeap();

}  // namespace migserve

#endif  // MIGSERVE_UTIL_HEAP_H_
