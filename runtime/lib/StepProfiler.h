//===- StepProfiler.h - Spans of a compiled graph's steps -------*- C++ -*-===//
//
// This file declares kiln::StepProfiler, the runtime's side of the profiler
// hooks that a package's model.so calls around each step of a run
// (kiln_model_profiler, ModelABI.h): it notes when each step began and
// ended, by the steady clock on the CPU or by CUDA events on the run's
// stream (read after the run), and turns them into spans of a kiln::Trace.
// Internal to the runtime; Model::run uses it for RunOptions::trace.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_STEPPROFILER_H
#define KILN_RUNTIME_LIB_STEPPROFILER_H

#include "cuda/CudaEventLog.h"
#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/Trace.h"

#include <chrono>
#include <optional>
#include <vector>

namespace kiln {

/// Records the steps of one run made on one thread. Install hooks() with
/// the package's set_profiler export around the run, then call finish().
class StepProfiler {
public:
  /// Spans go to `trace`, on the calling thread's tid.
  explicit StepProfiler(Trace &trace);
  StepProfiler(const StepProfiler &) = delete;
  StepProfiler &operator=(const StepProfiler &) = delete;

  /// The hooks to install (they point to this object).
  const kiln_model_profiler *hooks() const { return &hooks_; }
  /// Adds one span per step that ended to the trace (after waiting for the
  /// CUDA events of a cuda package's steps). An error when recording or
  /// reading an event failed.
  Status finish();

private:
  static void begin(void *user, const kiln_model_step *step, void *stream);
  static void end(void *user, const kiln_model_step *step, void *stream);
  void note(const kiln_model_step *step, void *stream, bool isBegin);

  struct Mark {
    const kiln_model_step *step;
    bool isBegin;
    /// The steady clock (cpu) or the index of a CUDA event (cuda).
    std::chrono::steady_clock::time_point time;
    size_t event = 0;
  };

  Trace &trace_;
  kiln_model_profiler hooks_;
  std::vector<Mark> marks_;
  /// Cuda packages: the events and the host time of the first one.
  cuda::EventLog events_;
  std::optional<double> firstEventUs_;
  Status error_ = Status::ok();
};

} // namespace kiln

#endif // KILN_RUNTIME_LIB_STEPPROFILER_H
