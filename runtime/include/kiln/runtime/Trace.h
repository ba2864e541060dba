//===- Trace.h - Timed spans of runs, a Perfetto trace ---------*- C++ -*-===//
//
// This file declares kiln::Trace, the profiler of Model::run and runProgram
// (RunOptions::trace): a thread-safe list of spans, each a Chrome trace
// "complete" event ("ph": "X") with a name, a category, a start and a
// duration in microseconds, the process and thread, and arguments (the ONNX
// nodes of a step). A run adds one span for itself, one per step of a
// compiled graph (kernel, library call, reference op, copy), and one per op
// that the reference runtime runs (graph breaks of program packages, or a
// traced model). writeJson writes {"traceEvents": [...]}, which
// ui.perfetto.dev and chrome://tracing open (docs/runtime-api.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRACE_H
#define KILN_RUNTIME_TRACE_H

#include "kiln/runtime/Status.h"

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// One span of a trace: a Chrome trace complete event.
struct TraceEvent {
  /// What ran: "fused_0", "runtime.matmul", "kiln.relu", the package.
  std::string name;
  /// "run" (a Model::run or runProgram call), "kernel", "library",
  /// "reference", "copy" (steps of a compiled graph), "eager" (an op the
  /// reference runtime ran) or "graph_break" (an eager region).
  std::string category;
  /// Microseconds since the trace's origin (Trace::nowMicroseconds), and the
  /// span's length. On the GPU, both come from CUDA events (see
  /// docs/runtime-api.md, "Profiling").
  double startUs = 0;
  double durationUs = 0;
  /// The process id and a small number per thread (Trace::threadId).
  int pid = 0;
  int tid = 0;
  /// Extra key/value pairs ("nodes": the ONNX nodes, "step": its number).
  std::vector<std::pair<std::string, std::string>> args;
};

/// Collects the spans of any number of runs, from any number of threads.
/// Give it to runs through RunOptions::trace (or runProgram), then write it
/// with writeJson.
class Trace {
public:
  /// The origin (timestamp 0) is the moment of construction.
  Trace();
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  /// Microseconds from the origin to now (steady clock).
  double nowMicroseconds() const;
  /// Microseconds from the origin to `time`.
  double microsecondsAt(std::chrono::steady_clock::time_point time) const;
  /// A small, stable number for the calling thread (1, 2, ... in order of
  /// first use in the process): the "tid" of its spans.
  static int threadId();

  /// Appends spans (thread-safe).
  void add(TraceEvent event);
  void add(std::vector<TraceEvent> events);
  /// A copy of the spans so far, in the order they were added.
  std::vector<TraceEvent> events() const;

  /// The trace as Chrome trace JSON: {"traceEvents": [...],
  /// "displayTimeUnit": "ms"}, spans sorted by start time.
  std::string toJson() const;
  /// Writes toJson() to `path` (through a temporary file renamed into
  /// place); errors name the file.
  Status writeJson(const std::string &path) const;

private:
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
};

} // namespace kiln

#endif // KILN_RUNTIME_TRACE_H
