//===- HugePageMemory.cpp - Large buffers on transparent huge pages -------===//
//
// This file implements allocateHugePageMemory (HugePageMemory.h):
// posix_memalign at 2 MB for a large buffer (glibc maps it; the alignment
// costs address space, not memory), then madvise(MADV_HUGEPAGE) over the
// whole 2 MB pages inside it. The tail past the last whole page keeps small
// pages, so no more memory is touched than the buffer's.
//
//===----------------------------------------------------------------------===//

#include "HugePageMemory.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kiln {

void *allocateHugePageMemory(size_t bytes) {
  if (bytes == 0)
    bytes = 1;
  const bool huge = bytes >= kHugePageBytes;
  void *p = nullptr;
  if (posix_memalign(&p, huge ? kHugePageBytes : 64, bytes) != 0)
    return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // A hint: EINVAL where the kernel has no THP leaves ordinary pages.
  if (huge)
    (void)madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
#endif
  return p;
}

HugePageFloats allocateHugePageFloats(size_t count) {
  HugePageFloats floats(
      static_cast<float *>(allocateHugePageMemory(count * sizeof(float))));
  if (!floats)
    throw std::bad_alloc();
  return floats;
}

} // namespace kiln
