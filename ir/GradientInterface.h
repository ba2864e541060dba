//===- GradientInterface.h - Gradient rules of kiln ops ---------*- C++ -*-===//
//
// This file declares kiln::GradientOpInterface (generated from
// KilnGradientInterface.td), the reverse-mode gradient rule of an op, and
// registerGradientRules, which attaches the rules of ir/GradientRules*.cpp
// to the kiln ops of a context (the dialect does it when it loads).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_GRADIENTINTERFACE_H
#define KILN_IR_GRADIENTINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {
class GradientBuilder;
} // namespace kiln

#include "ir/KilnGradientInterface.h.inc"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kiln {
/// Attaches the gradient rules of every differentiable kiln op to the
/// registered kiln ops of `context` (the table in ir/GradientRules.cpp).
void registerGradientRules(mlir::MLIRContext *context);
} // namespace kiln

#endif // KILN_IR_GRADIENTINTERFACE_H
