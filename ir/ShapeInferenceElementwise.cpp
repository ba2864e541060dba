//===- ShapeInferenceElementwise.cpp - Elementwise result types -----------===//
//
// This file implements result-type inference and verification for the
// elementwise kiln ops (binary with broadcasting, comparisons, unary ops,
// `where`, `cast`), for the ops whose result has the type of their first
// operand, and for `kiln.constant`.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

using namespace mlir;
using namespace kiln::infer;

/// Broadcasts the shapes of all operands (which must share the element type
/// unless `firstOperandDiffers`, for `where`'s condition).
static FailureOr<SmallVector<int64_t>>
broadcastOperands(const InferContext &ctx, unsigned count,
                  unsigned firstSameType, Type &elementType) {
  if (failed(ctx.expectOperands(count)))
    return failure();
  SmallVector<int64_t> shape;
  SmallVector<RankedTensorType> types;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<RankedTensorType> type = ctx.tensor(i);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  elementType = types[firstSameType].getElementType();
  for (unsigned i = firstSameType + 1; i < count; ++i)
    if (types[i].getElementType() != elementType)
      return ctx.emitError("operands #", firstSameType, " and #", i,
                           " must have the same element type, got ",
                           types[firstSameType], " and ", types[i]);
  shape.assign(types[0].getShape().begin(), types[0].getShape().end());
  for (unsigned i = 1; i < count; ++i) {
    FailureOr<SmallVector<int64_t>> next =
        broadcastShapes(shape, types[i].getShape());
    if (failed(next))
      return ctx.emitError("operands do not broadcast: ", formatShape(shape),
                           " and ", formatShape(types[i].getShape()), " (",
                           types[0], " and ", types[i], ")");
    shape = std::move(*next);
  }
  return shape;
}

LogicalResult kiln::infer::broadcastBinary(const InferContext &ctx,
                                           Results &results) {
  Type elementType;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(ctx, 2, 0, elementType);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

LogicalResult kiln::infer::broadcastCompare(const InferContext &ctx,
                                            Results &results) {
  Type elementType;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(ctx, 2, 0, elementType);
  if (failed(shape))
    return failure();
  results.push_back(
      RankedTensorType::get(*shape, IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult kiln::infer::where(const InferContext &ctx, Results &results) {
  Type elementType;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands(ctx, 3, 1, elementType);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

LogicalResult kiln::infer::sameAsFirst(const InferContext &ctx,
                                       Results &results) {
  if (failed(ctx.expectOperands(1, /*atLeast=*/true)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  if (failed(x))
    return failure();
  results.push_back(*x);
  return success();
}

LogicalResult kiln::infer::sameAsFirstWithAxis(const InferContext &ctx,
                                               Results &results) {
  if (failed(sameAsFirst(ctx, results)))
    return failure();
  auto x = llvm::cast<RankedTensorType>(results.back());
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(axis) || failed(checkAxis(ctx, "axis", *axis, x.getRank(), x)))
    return failure();
  return success();
}

LogicalResult kiln::infer::toBool(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  if (failed(x))
    return failure();
  results.push_back(x->clone(IntegerType::get(ctx.getContext(), 1)));
  return success();
}

LogicalResult kiln::infer::castTo(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<Type> to = ctx.typeAttr("to");
  if (failed(x) || failed(to))
    return failure();
  if (!RankedTensorType::isValidElementType(*to))
    return ctx.emitError("attribute 'to' must be an element type, got ", *to);
  results.push_back(x->clone(*to));
  return success();
}

LogicalResult kiln::infer::constant(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(0)))
    return failure();
  FailureOr<ElementsAttr> value = ctx.elementsAttr("value");
  if (failed(value))
    return failure();
  auto type = llvm::dyn_cast<RankedTensorType>(value->getType());
  if (!type)
    return ctx.emitError("attribute 'value' must have a ranked tensor type, "
                         "got ",
                         value->getType());
  results.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult kiln::verifiers::modAttrs(Operation *op) {
  InferContext ctx(op);
  FailureOr<int64_t> fmod = ctx.i64Attr("fmod");
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return ctx.emitError("attribute 'fmod' must be 0 or 1, got ", *fmod);
  return success();
}

LogicalResult kiln::verifiers::bitShiftAttrs(Operation *op) {
  return InferContext(op).enumAttr("direction", {"left", "right"});
}

LogicalResult kiln::verifiers::geluAttrs(Operation *op) {
  return InferContext(op).enumAttr("approximate", {"none", "tanh"});
}
