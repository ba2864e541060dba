//===- ProgramPackager.h - Packages of programs with graph breaks -*- C++ -*-===//
//
// This file declares the writer of a program package: the package of a
// model whose planned module (kiln-plan-graph-breaks) is a program of
// several compiled graphs, eager regions and control flow.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAMPACKAGER_H
#define KILN_COMPILER_PROGRAMPACKAGER_H

#include "compiler/GraphBreakReport.h"
#include "compiler/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace kiln {

/// Writes the package of a planned program into `options.outputDir`:
///   manifest.json   "kind": "program", the signature, the graphs, the
///                   graph breaks (from `report`), compile times
///   program.json    the glue (runtime Program: eager regions, if/loop,
///   program.bin     calls of the graphs) and its constants
///   graphs/<name>/  one ordinary package per compiled graph
/// Each graph runs Kiln's graph passes and is packaged like a model without
/// breaks. Written into a temp folder renamed at the end.
mlir::LogicalResult writeProgramPackage(mlir::ModuleOp module,
                                        const CompileOptions &options,
                                        const GraphBreakReport &report);

} // namespace kiln

#endif // KILN_COMPILER_PROGRAMPACKAGER_H
