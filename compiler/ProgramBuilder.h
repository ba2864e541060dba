//===- ProgramBuilder.h - A traced kiln graph as a runtime Program -*- C++ -*-//
//
// This file declares the bridge from a traced kiln graph (a func.func of kiln
// ops) to the runtime's MLIR-free Program, which the reference executor runs.
// The bridge is generic: op names lose their "kiln." prefix, attributes are
// converted kind by kind; nothing here lists ops.
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

/// Builds the Program of a graph function.
Expected<Program> buildProgram(mlir::func::FuncOp graph);

/// The ONNX node name and op type recorded in a location, if any.
struct SourceInfo {
  std::string nodeName;
  std::string opType;
};
SourceInfo getSourceInfo(mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_PROGRAMBUILDER_H
