//===- CudaEventLog.h - CUDA events recorded around steps -------*- C++ -*-===//
//
// This file declares kiln::cuda::EventLog: CUDA events recorded on a stream,
// one per call, whose device times relative to the first are read once the
// work is done. The step profiler (StepProfiler.cpp) records one before and
// one after each step of a cuda package's run. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDAEVENTLOG_H
#define KILN_RUNTIME_LIB_CUDA_CUDAEVENTLOG_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <vector>

namespace kiln {
namespace cuda {

/// Events recorded on streams (cuEventRecord), in order. Not copyable; one
/// thread at a time.
class EventLog {
public:
  EventLog() = default;
  EventLog(const EventLog &) = delete;
  EventLog &operator=(const EventLog &) = delete;
  ~EventLog();

  /// Records a new event on `stream` (a CUstream) and returns its index.
  Expected<size_t> record(void *stream);
  /// The number of events recorded.
  size_t size() const { return events_.size(); }
  /// Waits for the last event and returns, for each event, the device
  /// milliseconds since the first one (cuEventElapsedTime).
  Expected<std::vector<double>> millisecondsSinceFirst() const;

private:
  std::vector<void *> events_; ///< CUevents.
};

} // namespace cuda
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDAEVENTLOG_H
