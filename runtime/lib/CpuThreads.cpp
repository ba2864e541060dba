//===- CpuThreads.cpp - Threads of concurrent CPU runs --------------------===//
//
// This file implements ConcurrentCpuRun (CpuThreads.h): a process-wide
// count of the CPU runs in flight. OpenBLAS's thread count is left alone:
// its sgemm results depend on it (on AVX-512 hosts the single-threaded path
// rounds differently), and outputs must not depend on whether runs overlap;
// BLAS calls take turns instead (runtime/kernels/Linalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "CpuThreads.h"

#include <mutex>

namespace kiln {

namespace {

std::mutex runsMutex;
int runsInFlight = 0;

} // namespace

ConcurrentCpuRun::ConcurrentCpuRun() {
  std::lock_guard<std::mutex> lock(runsMutex);
  overlaps_ = ++runsInFlight > 1;
}

ConcurrentCpuRun::~ConcurrentCpuRun() {
  std::lock_guard<std::mutex> lock(runsMutex);
  --runsInFlight;
}

} // namespace kiln
