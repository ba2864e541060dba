//===- HugePageMemory.h - Large buffers on transparent huge pages -*- C++
//-*-===//
//
// This file declares allocateHugePageMemory, the runtime's allocation of
// large, long-lived buffers that a run streams through: oneDNN's packed
// weights, PanelMatmul's panels and the arenas. A buffer of at least
// kHugePageBytes starts on a 2 MB boundary and is advised for transparent
// huge pages (madvise MADV_HUGEPAGE; Linux's default THP mode, "madvise",
// gives huge pages only to memory that asks), so that a run reading
// ResNet-50's 100 MB of weights from memory takes one TLB entry per 2 MB
// instead of per 4 KB and the hardware prefetchers run on. Where the kernel
// has no THP or refuses, the buffer is ordinary memory: the advice is a
// hint, never an error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HUGEPAGEMEMORY_H
#define KILN_RUNTIME_HUGEPAGEMEMORY_H

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace kiln {

/// The size of a huge page on x86-64 and AArch64 Linux (2 MB): smaller
/// buffers are allocated 64-byte aligned and not advised.
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// `bytes` (at least 1) of uninitialised memory, 64-byte aligned, freed with
/// std::free; from kHugePageBytes up, 2 MB aligned and advised for huge
/// pages. Null when out of memory.
void *allocateHugePageMemory(size_t bytes);

/// std::free as a deleter.
struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// Floats of allocateHugePageMemory, owned (the panels of PanelMatmul and
/// PanelConv).
using HugePageFloats = std::unique_ptr<float[], FreeDeleter>;

/// `count` uninitialised floats from allocateHugePageMemory; throws
/// std::bad_alloc when out of memory.
HugePageFloats allocateHugePageFloats(size_t count);

} // namespace kiln

#endif // KILN_RUNTIME_HUGEPAGEMEMORY_H
