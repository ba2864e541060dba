//===- CpuThreads.h - Threads of concurrent CPU runs ------------*- C++ -*-===//
//
// This file declares ConcurrentCpuRun, the scope every run of a cpu package
// holds: it counts the runs in flight in the process, and while more than
// one is, the generated kernels and oneDNN calls of each run use one thread
// (the calling thread's OpenMP thread count, set per run in ModelRun.cpp;
// runtime/lib/OneDnn.cpp makes a primitive per thread count); the
// remaining OpenBLAS calls take turns on OpenBLAS's own pool
// (runtime/kernels/Linalg.cpp), whose thread count never changes, so that
// outputs do not depend on whether runs overlap. Without the one-thread
// kernels and the turns, 8 threads running one package on 2 cores measured
// 20x slower per run (a pool of threads per caller on two cores).
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
