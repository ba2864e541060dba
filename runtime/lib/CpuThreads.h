//===- CpuThreads.h - Threads of concurrent CPU runs ------------*- C++ -*-===//
//
// This file declares ConcurrentCpuRun, the scope every run of a cpu package
// holds: it counts the runs in flight in the process, and while more than
// one is, the BLAS library (OpenBLAS) runs each call on the calling thread
// instead of on its own pool; the generated kernels' threads are set per
// run in ModelRun.cpp. Without it, 8 threads running one package on 2 cores
// measured 20x slower per run than with one thread each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CPUTHREADS_H
#define KILN_RUNTIME_LIB_CPUTHREADS_H

namespace kiln {

/// Held for the duration of one CPU run (RAII).
class ConcurrentCpuRun {
public:
  ConcurrentCpuRun();
  ~ConcurrentCpuRun();
  ConcurrentCpuRun(const ConcurrentCpuRun &) = delete;
  ConcurrentCpuRun &operator=(const ConcurrentCpuRun &) = delete;

  /// True when other CPU runs were in flight when this one began.
  bool overlaps() const { return overlaps_; }

private:
  bool overlaps_;
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_CPUTHREADS_H
