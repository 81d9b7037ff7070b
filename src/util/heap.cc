#include "util/heap.h"

#include <malloc.h>

namespace migserve {

void KeepFreedHeap() {
  // Setting any of these also ends glibc's own adjustment of the mmap
  // threshold, which otherwise rises with the largest block freed: the
  // threshold is set here for that reason.
  static const bool kept = [] {
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapBytes));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimBytes));
    mallopt(M_TOP_PAD, static_cast<int>(kHeapPadBytes));
    return true;
  }();
  (void)kept;
}

}  // namespace migserve
