//===- ModelHeaderEmitter.h - The generated package header ------*- C++ -*-===//
//
// This file declares the emitter of <name>.h, the C and C++ API that comes
// with every package.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_MODELHEADEREMITTER_H
#define KILN_CODEGEN_MODELHEADEREMITTER_H

#include "codegen/MemoryPlanner.h"

#include <string>

namespace kiln {

class GraphCodegen;

/// The text of the package header for a graph with this memory plan (its
/// signature, arena size and kernels), named and shaped by `codegen` (its
/// package names, target entry points and kernels' entry points).
std::string emitModelHeader(const MemoryPlan &plan, GraphCodegen &codegen);

} // namespace kiln

#endif // KILN_CODEGEN_MODELHEADEREMITTER_H
