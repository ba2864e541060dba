//===- TensorConversion.h - MLIR attributes <-> runtime values -*- C++ -*-===//
//
// This file declares the conversions between MLIR's types and attributes and
// the runtime's DType, Tensor and AttrValue. The tracer uses them to evaluate
// ops on constants at trace time through the runtime's kernels; the program
// builder uses them to hand a traced graph to the reference executor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_TENSORCONVERSION_H
#define KILN_PASSES_TENSORCONVERSION_H

#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace kiln {

/// The MLIR element type of a dtype (f32, f16, bf16, f64, i64, i32, i8,
/// ui8 is represented as i8-sized unsigned `ui8`, bool as i1).
mlir::Type toMlirElementType(mlir::MLIRContext *ctx, DType dtype);
/// The dtype of an MLIR element type; nullopt when Kiln does not support it.
std::optional<DType> fromMlirElementType(mlir::Type type);
/// The ranked tensor type of a runtime tensor.
mlir::RankedTensorType toMlirTensorType(mlir::MLIRContext *ctx,
                                        const Tensor &tensor);
/// A DenseElementsAttr holding a copy of the tensor's elements.
mlir::DenseElementsAttr toElementsAttr(mlir::MLIRContext *ctx,
                                       const Tensor &tensor);
/// A CPU tensor holding a copy of the attribute's elements; nullopt when the
/// element type is unsupported.
std::optional<Tensor> toTensor(mlir::ElementsAttr attr);
/// Converts one op attribute to the runtime's form (see
/// docs/op-semantics.md); nullopt for attribute kinds the runtime ignores.
std::optional<AttrValue> toAttrValue(mlir::Attribute attr);
/// Converts all attributes of an op (by name).
Attributes toAttributes(mlir::DictionaryAttr attrs);

} // namespace kiln

#endif // KILN_PASSES_TENSORCONVERSION_H
