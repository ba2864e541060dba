//===- Target.cpp - A code generation backend -----------------------------===//
//
// This file implements the out-of-line parts of the Target and GraphCodegen
// interfaces (virtual destructors, the defaults of Target::compilesOp and
// GraphCodegen::kernelName); the backends are in targets/.
//
//===----------------------------------------------------------------------===//

#include "codegen/Target.h"
#include "ir/KilnOps.h"

namespace kiln {

GraphCodegen::~GraphCodegen() = default;

std::string GraphCodegen::kernelName(mlir::Operation *op) {
  if (auto fusion = mlir::dyn_cast<FusionOp>(op))
    return fusion.getName().str();
  return op->getName().getStringRef().str();
}
Target::~Target() = default;

bool Target::compilesOp(mlir::Operation *op) const {
  return !op->hasTrait<kiln::OpTrait::EagerOnly>();
}

} // namespace kiln
