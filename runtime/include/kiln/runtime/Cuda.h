//===- Cuda.h - The CUDA device: driver, memory, streams ------*- C++ -*-===//
//
// This file declares kiln::cuda, the C++ side of the runtime's CUDA support.
// The CUDA driver (libcuda.so.1) is loaded with dlopen on first use, so the
// runtime loads and works on a machine without a GPU or driver: available()
// then says why CUDA cannot be used. One context per process: the primary
// context of device 0 (or of $KILN_CUDA_DEVICE), made current on each thread
// that calls into this API.
//
// Device memory comes from a caching allocator: freed blocks go to free
// lists by rounded size and are reused by later allocations of the same size
// class. A block must only be freed when no enqueued work uses it any more
// (kiln::Model synchronizes its stream before a run returns).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_H
#define KILN_RUNTIME_CUDA_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <string>

namespace kiln {
namespace cuda {

/// Ok when CUDA can be used: the runtime was built with the CUDA headers,
/// libcuda.so.1 loads, cuInit succeeds and the device exists (its primary
/// context is then retained). Otherwise the message says why and what to do.
/// Cheap after the first call.
Status available();

/// "NVIDIA H200 (device 0, sm_90)", or the reason CUDA is unavailable.
std::string deviceDescription();

/// The compute capability of the device as major * 10 + minor (90 for
/// sm_90).
Expected<int> computeCapability();

/// A device allocation of at least `bytes` bytes (256-byte aligned) from the
/// caching allocator; zero bytes gives a valid minimum-size block.
Expected<void *> allocate(size_t bytes);
/// Returns a block from allocate() to the allocator's free lists. Null is
/// ignored.
void deallocate(void *ptr);
/// Frees the cached (unused) blocks back to the driver.
void emptyCache();

/// Counters of the caching allocator.
struct AllocatorStats {
  size_t bytesInUse = 0;        ///< In blocks handed out (rounded sizes).
  size_t bytesCached = 0;       ///< In free blocks kept for reuse.
  size_t driverAllocations = 0; ///< cuMemAlloc calls that succeeded.
  size_t cacheHits = 0;         ///< Allocations served from a free list.
  /// The most bytesInUse has been since the process started or the last
  /// resetPeakBytesInUse() (what torch.cuda.max_memory_allocated reports
  /// for PyTorch's allocator).
  size_t peakBytesInUse = 0;
};
AllocatorStats allocatorStats();
/// Starts a new peak: peakBytesInUse becomes bytesInUse.
void resetPeakBytesInUse();
/// The size class an allocation of `bytes` bytes is rounded up to.
size_t roundedAllocationSize(size_t bytes);

/// Direction of a copy (values match KILN_CUDA_*_TO_* of CudaServices.h).
enum class CopyKind : int {
  HostToDevice = 0,
  DeviceToHost = 1,
  DeviceToDevice = 2
};
/// The copies `copy` has made since the process started, by kind (every
/// thread's; a copy of 0 bytes is not one). A run of a package that reads
/// and writes device tensors makes none but its host steps' (the GPU bench
/// checks that a package without host ops makes none).
struct CopyStats {
  size_t hostToDevice = 0;
  size_t deviceToHost = 0;
  size_t deviceToDevice = 0;
};
CopyStats copyStats();

/// Copies `bytes` bytes on `stream` (a CUstream; null: the default stream).
/// With `synchronous`, waits for the stream afterwards.
Status copy(void *dst, const void *src, size_t bytes, CopyKind kind,
            void *stream = nullptr, bool synchronous = true);
/// Waits for `stream`.
Status synchronize(void *stream);

/// A stream from the process-wide pool (created on demand), for one user at
/// a time; give it back with releaseStream.
Expected<void *> acquireStream();
void releaseStream(void *stream);

/// The device time of work enqueued on one stream: start() records an event
/// before it, stop() one after it, and elapsedMilliseconds() waits for the
/// second and returns the time between them (CudaTimer.cpp). Not copyable;
/// one thread at a time.
class StreamTimer {
public:
  StreamTimer() = default;
  StreamTimer(const StreamTimer &) = delete;
  StreamTimer &operator=(const StreamTimer &) = delete;
  ~StreamTimer();

  Status start(void *stream);
  Status stop();
  Expected<double> elapsedMilliseconds() const;

private:
  void *start_ = nullptr, *stop_ = nullptr; ///< CUevents, made by start()
  void *stream_ = nullptr;
};

} // namespace cuda
} // namespace kiln

#endif // KILN_RUNTIME_CUDA_H
