//===- ModelHeaderEmitter.h - The generated model.h ------------*- C++ -*-===//
//
// This file declares the emitter of model.h, the typed C++ API that comes
// with every package.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_MODELHEADEREMITTER_H
#define KILN_CODEGEN_MODELHEADEREMITTER_H

#include "codegen/MemoryPlanner.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln {

/// The text of model.h for a package with this memory plan (its signature
/// and arena size) and model name.
std::string emitModelHeader(const MemoryPlan &plan, llvm::StringRef modelName);

} // namespace kiln

#endif // KILN_CODEGEN_MODELHEADEREMITTER_H
