//===- KilnOps.cpp - The ops of the kiln dialect --------------------------===//
//
// This file implements the kiln ops: the ODS-generated definitions (whose
// inferReturnTypes and verify forward to ShapeInference*.cpp) and the
// folders.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;

#define GET_OP_CLASSES
#include "ir/KilnOps.cpp.inc"

OpFoldResult kiln::ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult kiln::ShapeOp::fold(FoldAdaptor) {
  auto type = llvm::cast<RankedTensorType>(getX().getType());
  int64_t start = getStart(), end = getEnd();
  if (start < 0 || end > type.getRank() || start > end)
    return {};
  ArrayRef<int64_t> dims = type.getShape().slice(start, end - start);
  auto resultType = llvm::cast<ShapedType>(getType());
  if (ShapedType::isDynamicShape(dims) || !resultType.hasStaticShape() ||
      resultType.getNumElements() != static_cast<int64_t>(dims.size()))
    return {};
  return DenseElementsAttr::get(resultType, dims);
}

OpFoldResult kiln::SizeOp::fold(FoldAdaptor) {
  auto type = llvm::cast<RankedTensorType>(getX().getType());
  auto resultType = llvm::cast<ShapedType>(getType());
  if (!type.hasStaticShape() || resultType.getRank() != 0)
    return {};
  int64_t count = type.getNumElements();
  return DenseElementsAttr::get(resultType, llvm::ArrayRef<int64_t>(count));
}
