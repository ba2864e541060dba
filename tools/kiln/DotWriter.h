//===- DotWriter.h - kiln IR as a Graphviz picture --------------*- C++ -*-===//
//
// This file declares writeDot, `kiln dump --format dot`: a graph of kiln IR
// for Graphviz, ops as boxes, values as edges, fusions and graph breaks as
// boxed clusters.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_DOTWRITER_H
#define KILN_TOOLS_KILN_DOTWRITER_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Writes `root` (a module or a function) as a Graphviz digraph: one box per
/// op (its op name, ONNX node name and result type), an edge per use of a
/// value; each kiln.fusion a blue cluster named after its kernel, each
/// kiln.eager (a graph break) a red cluster labelled with its reason, other
/// ops with regions (kiln.if, kiln.loop, functions) grey clusters. Constants
/// are left out (they are weights and shapes, not the computation).
void writeDot(mlir::Operation *root, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_TOOLS_KILN_DOTWRITER_H
