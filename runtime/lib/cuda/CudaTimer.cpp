//===- CudaTimer.cpp - Device time of work on one stream ------------------===//
//
// This file implements kiln::cuda::StreamTimer: two CUDA events recorded on a
// stream around some work, whose difference is the device time of that work
// (what PyTorch's torch.cuda.Event timing measures), without the host's time
// to enqueue it or to wait for it. kiln::Model reports it through
// RunOptions::deviceMilliseconds.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Cuda.h"

#include "CudaDriver.h"

namespace kiln {
namespace cuda {

#ifdef KILN_HAVE_CUDA

StreamTimer::~StreamTimer() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return;
  if (start_)
    (*dr)->eventDestroy(static_cast<CUevent>(start_));
  if (stop_)
    (*dr)->eventDestroy(static_cast<CUevent>(stop_));
}

Status StreamTimer::start(void *stream) {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  for (void **e : {&start_, &stop_})
    if (!*e) {
      CUevent ev = nullptr;
      KILN_RETURN_IF_ERROR(
          check(d, d.eventCreate(&ev, CU_EVENT_DEFAULT), "creating a CUDA event"));
      *e = ev;
    }
  stream_ = stream;
  return check(d,
               d.eventRecord(static_cast<CUevent>(start_),
                             static_cast<CUstream>(stream)),
               "recording a CUDA event");
}

Status StreamTimer::stop() {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  return check(**dr,
               (*dr)->eventRecord(static_cast<CUevent>(stop_),
                                  static_cast<CUstream>(stream_)),
               "recording a CUDA event");
}

Expected<double> StreamTimer::elapsedMilliseconds() const {
  Expected<const Driver *> dr = driver();
  if (!dr)
    return dr.status();
  const Driver &d = **dr;
  KILN_RETURN_IF_ERROR(check(d, d.eventSynchronize(static_cast<CUevent>(stop_)),
                             "waiting for a CUDA event"));
  float ms = 0;
  KILN_RETURN_IF_ERROR(check(d,
                             d.eventElapsedTime(&ms, static_cast<CUevent>(start_),
                                                static_cast<CUevent>(stop_)),
                             "reading the time between two CUDA events"));
  return static_cast<double>(ms);
}

#else // !KILN_HAVE_CUDA

StreamTimer::~StreamTimer() = default;
Status StreamTimer::start(void *) { return available(); }
Status StreamTimer::stop() { return available(); }
Expected<double> StreamTimer::elapsedMilliseconds() const {
  return available();
}

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
