//===- Executor.h - The reference executor of a Program --------*- C++ -*-===//
//
// This file declares the reference executor: it checks the given inputs
// against the Program's signature (names, dtypes, static dimensions, named
// dynamic dimensions agreeing), runs every node through the Dispatcher in
// order on the CPU, releases each value after its last use, and returns the
// outputs. It is the oracle every compiled path is checked against. It also
// runs programs with graph breaks: "if" and "loop" nodes (ONNX If and Loop),
// "eager" regions, and "call" nodes, which it hands to ProgramHooks (the
// package loader runs compiled graphs there).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXECUTOR_H
#define KILN_RUNTIME_EXECUTOR_H

#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
class Trace;

/// What a program's "call" nodes run.
struct ProgramHooks {
  /// Runs compiled graph `index` (of Program::graphs) on `inputs` (the
  /// graph's inputs in order) and returns its outputs in order, on the CPU.
  std::function<Expected<std::vector<Tensor>>(int index,
                                              const std::vector<Tensor> &)>
      callGraph;
};

/// Counts of one run of a program, for profiles (`kiln run --profile`).
struct ProgramStats {
  int64_t graphCalls = 0;     ///< "call" nodes run.
  int64_t eagerRegions = 0;   ///< "eager" nodes run (graph breaks taken).
  /// kiln ops run by the reference runtime's kernels: those of eager
  /// regions and any other op outside a compiled graph (if/loop glue, or
  /// every op of a plain traced program).
  int64_t eagerOps = 0;
  int64_t branches = 0;       ///< "if" nodes run.
  int64_t loopIterations = 0; ///< loop bodies run.
  double eagerSeconds = 0;    ///< time in those kernels (eagerOps).
  double graphSeconds = 0;    ///< time in callGraph.
  /// Bytes copied between the host and the device around compiled graphs
  /// (a cuda program: eager regions and glue run on the CPU). Counted by
  /// the package loader's callGraph, not by runProgram.
  int64_t copiedBytes = 0;
};

/// Runs `program` with `inputs` (by name; weights by name too) and returns
/// the outputs in signature order. "call" nodes need `hooks` (an error
/// naming the node otherwise); `stats`, when given, receives the counts.
/// With `checkNan`, the run stops at the first node (an op, or a compiled
/// graph's call) whose result holds a NaN or an infinity, with an error
/// naming the node and its ONNX node. `trace`, when given, receives a span
/// per op the reference kernels run (category "eager", its ONNX node and op
/// type as arguments) and per eager region ("graph_break"); the caller adds
/// the span of the whole run (kiln/runtime/Trace.h).
Expected<NamedTensors>
runProgram(const Program &program, const NamedTensors &inputs,
           const NamedTensors &weights = {},
           const ProgramHooks *hooks = nullptr, ProgramStats *stats = nullptr,
           bool checkNan = false, Trace *trace = nullptr);

} // namespace kiln

#endif // KILN_RUNTIME_EXECUTOR_H
