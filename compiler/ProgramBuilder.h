//===- ProgramBuilder.h - A traced kiln graph as a runtime Program -*- C++ -*-//
//
// This file declares the bridge from a traced kiln graph (a func.func of kiln
// ops) to the runtime's MLIR-free Program, which the reference executor runs.
// The bridge is generic: op names lose their "kiln." prefix, attributes are
// converted kind by kind; nothing here lists ops except the structural ones
// of programs with control flow and graph breaks (kiln.if, kiln.loop,
// kiln.eager and func.call of a compiled graph), which become the "if",
// "loop", "eager" and "call" nodes of runtime/include/kiln/runtime/Program.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAMBUILDER_H
#define KILN_COMPILER_PROGRAMBUILDER_H

#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace kiln {

/// Finds the graph function of a traced module (the one marked `kiln.graph`).
mlir::func::FuncOp findGraphFunction(mlir::ModuleOp module);

/// Finds the function the reference runtime runs: the one marked
/// `kiln.program` (a program split at graph breaks, calling graphs) when
/// there is one, else the graph function (a traced module).
mlir::func::FuncOp findProgramFunction(mlir::ModuleOp module);

/// Builds the Program of a graph or program function. kiln.if, kiln.loop and
/// kiln.eager become structural nodes with regions (one value-id space:
/// region block arguments get fresh ids, kiln.yield operands are the
/// region's results); `func.call @callee` becomes a "call" node whose int
/// attribute "graph" indexes Program::graphs (callees in order of first
/// call); kiln.loop nodes get the int list attributes "scan_dtypes" (the
/// DType of each scan output) and "scan_shapes" (for each scan output, the
/// rank of one iteration's value then its dims, -1 where dynamic: what a
/// loop that runs zero times needs to give [0, dims...]). Constants anywhere
/// become Program::constants.
Expected<Program> buildProgram(mlir::func::FuncOp graph);

/// The ONNX node name and op type recorded in a location, if any.
struct SourceInfo {
  std::string nodeName;
  std::string opType;
};
SourceInfo getSourceInfo(mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_PROGRAMBUILDER_H
