//===- Target.cpp - A code generation backend -----------------------------===//
//
// This file implements the out-of-line parts of the Target and GraphCodegen
// interfaces (virtual destructors, the default of Target::compilesOp); the
// backends are in targets/.
//
//===----------------------------------------------------------------------===//

#include "codegen/Target.h"
#include "ir/KilnOps.h"

namespace kiln {

GraphCodegen::~GraphCodegen() = default;
Target::~Target() = default;

bool Target::compilesOp(mlir::Operation *op) const {
  return !op->hasTrait<kiln::OpTrait::EagerOnly>();
}

} // namespace kiln
