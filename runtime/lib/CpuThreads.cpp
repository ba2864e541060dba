//===- CpuThreads.cpp - Threads of concurrent CPU runs --------------------===//
//
// This file implements ConcurrentCpuRun (CpuThreads.h). OpenBLAS's thread
// count is process-wide: it drops to one when a second run begins and goes
// back to what it was when the runs are down to one. The entry points are
// weak, so a BLAS without them (the reference BLAS) is left alone.
//
//===----------------------------------------------------------------------===//

#include "CpuThreads.h"

#include <atomic>
#include <mutex>

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace kiln {

namespace {

std::mutex blasMutex;
int runsInFlight = 0;
int blasThreads = 0; // OpenBLAS's count before the runs overlapped.

} // namespace

ConcurrentCpuRun::ConcurrentCpuRun() {
  std::lock_guard<std::mutex> lock(blasMutex);
  overlaps_ = ++runsInFlight > 1;
  if (runsInFlight == 2 && openblas_set_num_threads &&
      openblas_get_num_threads) {
    blasThreads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
}

ConcurrentCpuRun::~ConcurrentCpuRun() {
  std::lock_guard<std::mutex> lock(blasMutex);
  if (--runsInFlight == 1 && blasThreads > 0 && openblas_set_num_threads) {
    openblas_set_num_threads(blasThreads);
    blasThreads = 0;
  }
}

} // namespace kiln
