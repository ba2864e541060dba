//===- TargetRegistry.h - The code generation backends, by name -*- C++ -*-===//
//
// This file declares the registry of Kiln's backends (codegen/Target.h):
// the targets by name, for the pipeline and the CLI, and their lowering
// passes, for kiln-opt.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_TARGETREGISTRY_H
#define KILN_TARGETS_TARGETREGISTRY_H

#include "codegen/Target.h"

#include <string>
#include <vector>

namespace kiln {

/// The target named `name`, or null.
const Target *lookupTarget(llvm::StringRef name);

/// Every target's name, in registry order.
std::vector<std::string> targetNames();

/// "cpu, cuda".
std::string targetNameList();

/// Registers every target's lowering passes (kiln-lower-cpu,
/// kiln-lower-cuda) with MLIR's pass registry, for kiln-opt.
void registerTargetPasses();

} // namespace kiln

#endif // KILN_TARGETS_TARGETREGISTRY_H
