//===- KilnOps.h - The ops of the kiln dialect -------------------*- C++
//-*-===//
//
// This file declares the kiln ops (kiln::AddOp, kiln::ConvOp, ...), generated
// from the ODS table KilnOps.td. Result-type inference and verification are
// declared in ShapeInference.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "ir/KilnDialect.h"
#include "ir/ShapeInference.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln::OpTrait {
/// Marks kiln ops that only the reference runtime implements (ODS trait
/// `Kiln_EagerOnly`, KilnProgramOps.td): no code generator compiles them, so
/// they always run as a graph break.
template <typename ConcreteType>
class EagerOnly
    : public mlir::OpTrait::TraitBase<ConcreteType, EagerOnly> {};
} // namespace kiln::OpTrait

namespace kiln {
/// Verifies a region op isolated from above (kiln.fusion, kiln.eager): the
/// block's arguments mirror `inputs` (count and types), and it ends with a
/// kiln.yield of exactly the op's result types.
mlir::LogicalResult verifyMirroredRegion(mlir::Operation *op,
                                         mlir::ValueRange inputs,
                                         mlir::Block &block);
} // namespace kiln

#define GET_OP_CLASSES
#include "ir/KilnOps.h.inc"

#endif // KILN_IR_KILNOPS_H
