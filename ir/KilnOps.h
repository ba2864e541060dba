//===- KilnOps.h - The ops of the kiln dialect -------------------*- C++
//-*-===//
//
// This file declares the kiln ops (kiln::AddOp, kiln::ConvOp, ...), generated
// from the ODS table KilnOps.td, and the C++ classes of the kiln op traits
// (EagerOnly, the op families Elementwise, Reduction, View, Library, and
// Transcendental).
// Result-type inference and verification are declared in ShapeInference.h.
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

/// The elementwise family (ODS trait `Kiln_Elementwise`, KilnDialect.td):
/// one scalar function per element position after broadcasting. Such ops
/// fuse, and each is one scalar op of the kernel IR (codegen/KernelIR.h).
template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
};

/// The reduction family (ODS trait `Kiln_Reduction`): `reduce_*` over the
/// axes of parameter operand 1.
template <typename ConcreteType>
class Reduction : public mlir::OpTrait::TraitBase<ConcreteType, Reduction> {};

/// The view family (ODS trait `Kiln_View`): operand 0 read at other
/// indices, index arithmetic inside a fusion region.
template <typename ConcreteType>
class View : public mlir::OpTrait::TraitBase<ConcreteType, View> {};

/// The library family (ODS trait `Kiln_Library`): computed by a library
/// call (matmul, conv, conv_transpose), never inside a fusion region.
template <typename ConcreteType>
class Library : public mlir::OpTrait::TraitBase<ConcreteType, Library> {};

/// Elementwise ops computed with exp, log, erf or trigonometry per element
/// (ODS trait `Kiln_Transcendental`).
template <typename ConcreteType>
class Transcendental
    : public mlir::OpTrait::TraitBase<ConcreteType, Transcendental> {};
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
