//===- CudaMemory.cpp - Caching device allocator, copies and streams ------===//
//
// This file implements the device-memory half of kiln::cuda: the caching
// allocator (sizes rounded to 512 bytes below 1 MiB and to 1 MiB above; one
// free list per rounded size; a mutex guards everything; when cuMemAlloc
// runs out of memory the cached blocks are freed and the allocation is
// retried once), copies between host and device, stream synchronisation and
// the process-wide stream pool.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Cuda.h"

#include "CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln {
namespace cuda {

size_t roundedAllocationSize(size_t bytes) {
  constexpr size_t kSmall = 512;
  constexpr size_t kLarge = size_t(1) << 20;
  if (bytes == 0)
    return kSmall;
  if (bytes < kLarge)
    return (bytes + kSmall - 1) / kSmall * kSmall;
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

#ifdef KILN_HAVE_CUDA

namespace {

/// The caching allocator's state; never destroyed (see driver()).
struct Allocator {
  std::mutex mutex;
  std::map<size_t, std::vector<CUdeviceptr>> freeLists;
  std::unordered_map<CUdeviceptr, size_t> live;
  AllocatorStats stats;

  /// Frees every cached block; the mutex is held.
  void releaseCached(const Driver &d) {
    for (auto &[size, blocks] : freeLists)
      for (CUdeviceptr p : blocks)
        d.memFree(p);
    freeLists.clear();
    stats.bytesCached = 0;
  }
};

Allocator &allocator() {
  static Allocator *a = new Allocator();
  return *a;
}

/// The stream pool; never destroyed.
struct StreamPool {
  std::mutex mutex;
  std::vector<CUstream> free;
};

StreamPool &streamPool() {
  static StreamPool *p = new StreamPool();
  return *p;
}

} // namespace

Expected<void *> allocate(size_t bytes) {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  size_t size = roundedAllocationSize(bytes);
  Allocator &a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  auto it = a.freeLists.find(size);
  if (it != a.freeLists.end() && !it->second.empty()) {
    CUdeviceptr p = it->second.back();
    it->second.pop_back();
    a.live[p] = size;
    a.stats.bytesCached -= size;
    a.stats.bytesInUse += size;
    a.stats.peakBytesInUse =
        std::max(a.stats.peakBytesInUse, a.stats.bytesInUse);
    ++a.stats.cacheHits;
    return reinterpret_cast<void *>(p);
  }
  CUdeviceptr p = 0;
  CUresult r = d.memAlloc(&p, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && a.stats.bytesCached) {
    a.releaseCached(d);
    r = d.memAlloc(&p, size);
  }
  if (r != CUDA_SUCCESS)
    return Status::error(
        errorMessage(d, r,
                     strCat("allocating ", bytes, " bytes of device memory (",
                            a.stats.bytesInUse, " bytes in use by Kiln)")));
  a.live[p] = size;
  a.stats.bytesInUse += size;
  a.stats.peakBytesInUse = std::max(a.stats.peakBytesInUse, a.stats.bytesInUse);
  ++a.stats.driverAllocations;
  return reinterpret_cast<void *>(p);
}

void deallocate(void *ptr) {
  if (!ptr)
    return;
  Allocator &a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  auto it = a.live.find(reinterpret_cast<CUdeviceptr>(ptr));
  assert(it != a.live.end() &&
         "kiln::cuda::deallocate of a pointer not from allocate()");
  if (it == a.live.end())
    return;
  size_t size = it->second;
  a.live.erase(it);
  a.freeLists[size].push_back(reinterpret_cast<CUdeviceptr>(ptr));
  a.stats.bytesInUse -= size;
  a.stats.bytesCached += size;
}

void emptyCache() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return;
  Allocator &a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.releaseCached(**dr);
}

AllocatorStats allocatorStats() {
  Allocator &a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  return a.stats;
}

void resetPeakBytesInUse() {
  Allocator &a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.stats.peakBytesInUse = a.stats.bytesInUse;
}

namespace {
std::atomic<size_t> copiesHostToDevice{0}, copiesDeviceToHost{0},
    copiesDeviceToDevice{0};
} // namespace

CopyStats copyStats() {
  CopyStats stats;
  stats.hostToDevice = copiesHostToDevice.load();
  stats.deviceToHost = copiesDeviceToHost.load();
  stats.deviceToDevice = copiesDeviceToDevice.load();
  return stats;
}

Status copy(void *dst, const void *src, size_t bytes, CopyKind kind,
            void *stream, bool synchronous) {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  if (bytes == 0)
    return Status::ok();
  CUstream s = static_cast<CUstream>(stream);
  CUresult r = CUDA_SUCCESS;
  const char *what = "";
  switch (kind) {
  case CopyKind::HostToDevice:
    what = "copying host to device (cuMemcpyHtoDAsync)";
    ++copiesHostToDevice;
    r = d.memcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, s);
    break;
  case CopyKind::DeviceToHost:
    what = "copying device to host (cuMemcpyDtoHAsync)";
    ++copiesDeviceToHost;
    r = d.memcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, s);
    break;
  case CopyKind::DeviceToDevice:
    what = "copying device to device (cuMemcpyDtoDAsync)";
    ++copiesDeviceToDevice;
    r = d.memcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                          reinterpret_cast<CUdeviceptr>(src), bytes, s);
    break;
  default:
    return Status::error(strCat("copy kind ", static_cast<int>(kind),
                                " is not 0 (host to device), 1 (device to "
                                "host) or 2 (device to device)"));
  }
  KILN_RETURN_IF_ERROR(check(d, r, strCat(what, " of ", bytes, " bytes")));
  if (synchronous)
    return synchronize(stream);
  return Status::ok();
}

Status synchronize(void *stream) {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  return check(d, d.streamSynchronize(static_cast<CUstream>(stream)),
               "cuStreamSynchronize (an error of earlier work on the stream)");
}

Expected<void *> acquireStream() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  StreamPool &pool = streamPool();
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free.empty()) {
      CUstream s = pool.free.back();
      pool.free.pop_back();
      return static_cast<void *>(s);
    }
  }
  CUstream s = nullptr;
  KILN_RETURN_IF_ERROR(check(d, d.streamCreate(&s, CU_STREAM_NON_BLOCKING),
                             "creating a CUDA stream"));
  return static_cast<void *>(s);
}

void releaseStream(void *stream) {
  if (!stream)
    return;
  StreamPool &pool = streamPool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free.push_back(static_cast<CUstream>(stream));
}

#else // !KILN_HAVE_CUDA

Expected<void *> allocate(size_t) { return available(); }
void deallocate(void *) {}
void emptyCache() {}
AllocatorStats allocatorStats() { return {}; }
void resetPeakBytesInUse() {}
CopyStats copyStats() { return {}; }
Status copy(void *, const void *, size_t, CopyKind, void *, bool) {
  return available();
}
Status synchronize(void *) { return available(); }
Expected<void *> acquireStream() { return available(); }
void releaseStream(void *) {}

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
