//===- CudaEventLog.cpp - CUDA events recorded around steps ---------------===//
//
// This file implements kiln::cuda::EventLog (CudaEventLog.h) on the driver
// API the runtime loads with dlopen (CudaDriver.h): cuEventCreate and
// cuEventRecord per call, cuEventSynchronize on the last event and
// cuEventElapsedTime from the first one to each. Without the CUDA headers
// every call reports that CUDA is not compiled in.
//
//===----------------------------------------------------------------------===//

#include "CudaEventLog.h"

#include "kiln/runtime/Cuda.h"

#include "CudaDriver.h"

namespace kiln {
namespace cuda {

#ifdef KILN_HAVE_CUDA

EventLog::~EventLog() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return;
  for (void *e : events_)
    (*dr)->eventDestroy(static_cast<CUevent>(e));
}

Expected<size_t> EventLog::record(void *stream) {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  CUevent ev = nullptr;
  KILN_RETURN_IF_ERROR(check(d, d.eventCreate(&ev, CU_EVENT_DEFAULT),
                             "profiling: creating a CUDA event"));
  events_.push_back(ev);
  KILN_RETURN_IF_ERROR(check(d,
                             d.eventRecord(ev, static_cast<CUstream>(stream)),
                             "profiling: recording a CUDA event"));
  return events_.size() - 1;
}

Expected<std::vector<double>> EventLog::millisecondsSinceFirst() const {
  std::vector<double> times;
  if (events_.empty())
    return times;
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  KILN_RETURN_IF_ERROR(
      check(d, d.eventSynchronize(static_cast<CUevent>(events_.back())),
            "profiling: waiting for a CUDA event"));
  CUevent first = static_cast<CUevent>(events_.front());
  for (void *e : events_) {
    float ms = 0;
    KILN_RETURN_IF_ERROR(
        check(d, d.eventElapsedTime(&ms, first, static_cast<CUevent>(e)),
              "profiling: reading the time between two CUDA events"));
    times.push_back(static_cast<double>(ms));
  }
  return times;
}

#else // !KILN_HAVE_CUDA

EventLog::~EventLog() = default;
Expected<size_t> EventLog::record(void *) { return available(); }
Expected<std::vector<double>> EventLog::millisecondsSinceFirst() const {
  return available();
}

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
