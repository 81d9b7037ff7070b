#include "util/heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "util/test_util.h"

namespace migserve {
namespace {

// Where an allocation goes, kept out of the optimizer's reach (a malloc
// and free of memory never read may be dropped).
void* volatile sink;

char* Allocate(size_t bytes) {
  auto* p = static_cast<char*>(std::malloc(bytes));
  std::memset(p, 1, bytes);
  sink = p;
  return p;
}

char* Break() { return static_cast<char*>(sbrk(0)); }

// CBC's pattern: a block of megabytes allocated and freed again and again.
// Kept, it is taken from the heap each time and the heap's end never moves
// (no brk call); glibc's default mmaps a block this size at first, and
// later trims the heap's top on each free.
TEST(HeapTest, ABlockFreedAndTakenAgainStaysInTheHeap) {
  if (testing::kAddressSanitizer) {
    GTEST_SKIP() << "a sanitizer's allocator ignores glibc's settings";
  }
  KeepFreedHeap();
  KeepFreedHeap();  // once is enough; again changes nothing
  std::free(Allocate(4 << 20));
  char* end = Break();
  for (int i = 0; i < 100; ++i) {
    char* p = Allocate(4 << 20);
    EXPECT_LT(p, Break()) << "round " << i << ": the block was mmapped";
    std::free(p);
    ASSERT_EQ(Break(), end) << "round " << i << ": the heap moved";
  }
  // A block of the mmap threshold gets pages of its own, outside the heap.
  char* big = Allocate(kHeapMmapBytes);
  EXPECT_GE(big, Break());
  std::free(big);
}

}  // namespace
}  // namespace migserve
