//===- GradientBuilder.cpp - Building the ops of gradient rules -----------===//
//
// This file implements kiln::GradientBuilder: kiln ops created through
// createKilnOp at the forward op's location, and the shape helpers the
// gradient rules share (sumToShape undoes NumPy broadcasting).
//
//===----------------------------------------------------------------------===//

#include "ir/GradientBuilder.h"
#include "ir/KilnOpBuilder.h"
#include "ir/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {

GradientBuilder::GradientBuilder(OpBuilder &builder, Operation *forward,
                                 ArrayRef<bool> needed)
    : b_(builder), forward_(forward), needed_(needed.begin(), needed.end()) {}

LogicalResult GradientBuilder::unsupported(const Twine &why) {
  failed_ = true;
  return forward_->emitError("no gradient for '")
         << forward_->getName() << "': " << why;
}

SmallVector<Value> GradientBuilder::createMulti(StringRef name,
                                                ValueRange operands,
                                                ArrayRef<NamedAttribute> attrs) {
  if (failed_)
    return {};
  for (Value v : operands)
    if (!v) {
      failed_ = true;
      return {};
    }
  FailureOr<Operation *> op =
      createKilnOp(b_, forward_->getLoc(), name, operands, attrs);
  if (failed(op)) {
    failed_ = true;
    forward_->emitRemark("while building the gradient of this op");
    return {};
  }
  return SmallVector<Value>((*op)->getResults());
}

Value GradientBuilder::create(StringRef name, ValueRange operands,
                              ArrayRef<NamedAttribute> attrs,
                              unsigned result) {
  SmallVector<Value> results = createMulti(name, operands, attrs);
  return result < results.size() ? results[result] : Value();
}

Value GradientBuilder::add(Value a, Value b) {
  return create("kiln.add", {a, b});
}
Value GradientBuilder::sub(Value a, Value b) {
  return create("kiln.sub", {a, b});
}
Value GradientBuilder::mul(Value a, Value b) {
  return create("kiln.mul", {a, b});
}
Value GradientBuilder::div(Value a, Value b) {
  return create("kiln.div", {a, b});
}
Value GradientBuilder::neg(Value a) { return create("kiln.neg", {a}); }
Value GradientBuilder::unary(StringRef name, Value a) {
  return create(name, {a});
}
Value GradientBuilder::select(Value cond, Value a, Value b) {
  return create("kiln.where", {cond, a, b});
}
Value GradientBuilder::compare(StringRef name, Value a, Value b) {
  return create(name, {a, b});
}

Value GradientBuilder::scalar(double value, Value like) {
  if (!like)
    return {};
  return scalar(value, typeOf(like).getElementType());
}

Value GradientBuilder::scalar(double value, Type elementType) {
  if (failed_)
    return {};
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto f = dyn_cast<FloatType>(elementType))
    element = FloatAttr::get(f, value);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  return b_.create<ConstantOp>(forward_->getLoc(), type,
                               DenseElementsAttr::get(type, element));
}

Value GradientBuilder::indices(ArrayRef<int64_t> values) {
  if (failed_)
    return {};
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b_.getI64Type());
  return b_.create<ConstantOp>(forward_->getLoc(), type,
                               DenseElementsAttr::get(type, values));
}

Value GradientBuilder::zeros(RankedTensorType type) {
  if (failed_)
    return {};
  Attribute zero = isa<FloatType>(type.getElementType())
                       ? Attribute(FloatAttr::get(type.getElementType(), 0.0))
                       : Attribute(IntegerAttr::get(type.getElementType(), 0));
  return b_.create<ConstantOp>(forward_->getLoc(), type,
                               DenseElementsAttr::get(type, zero));
}

Value GradientBuilder::castTo(Value x, Type elementType) {
  if (!x || typeOf(x).getElementType() == elementType)
    return x;
  return create("kiln.cast", {x},
                {b_.getNamedAttr("to", TypeAttr::get(elementType))});
}

Value GradientBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  if (typeOf(x).getShape() == shape)
    return x;
  // allowzero = 1 only where a size is 0 (then 0 means 0, not "copy").
  bool zero = llvm::is_contained(shape, 0);
  return create("kiln.reshape", {x, indices(shape)},
                {b_.getNamedAttr("allowzero", b_.getI64IntegerAttr(zero))});
}

Value GradientBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  if (!x)
    return {};
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= p == static_cast<int64_t>(i);
  if (identity)
    return x;
  return create("kiln.transpose", {x},
                {b_.getNamedAttr("perm", b_.getDenseI64ArrayAttr(perm))});
}

Value GradientBuilder::expand(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  if (typeOf(x).getShape() == shape)
    return x;
  return create("kiln.expand", {x, indices(shape)});
}

Value GradientBuilder::reduceSum(Value x, ArrayRef<int64_t> axes,
                                 bool keepdims) {
  if (!x || axes.empty())
    return x;
  return create(
      "kiln.reduce_sum", {x, indices(axes)},
      {b_.getNamedAttr("keepdims", b_.getI64IntegerAttr(keepdims ? 1 : 0)),
       b_.getNamedAttr("noop_with_empty_axes", b_.getI64IntegerAttr(0))});
}

Value GradientBuilder::sumToShape(Value x, RankedTensorType type) {
  if (!x)
    return {};
  ArrayRef<int64_t> from = typeOf(x).getShape(), to = type.getShape();
  if (from == to)
    return x;
  int64_t lead = static_cast<int64_t>(from.size()) -
                 static_cast<int64_t>(to.size());
  if (lead < 0) {
    // Only a size-1 target can come from a lower-rank gradient (a reshape).
    return reshape(x, to);
  }
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d)
    if (d < lead || (to[d - lead] == 1 && from[d] != 1))
      axes.push_back(d);
  Value summed = reduceSum(x, axes, /*keepdims=*/true);
  return reshape(summed, to);
}

Value GradientBuilder::toOperand(Value x, unsigned i) {
  RankedTensorType type = typeOf(operand(i));
  return castTo(sumToShape(x, type), type.getElementType());
}

FailureOr<SmallVector<int64_t>> GradientBuilder::constantIndices(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) ||
      !attr.getElementType().isInteger(64)) {
    (void)unsupported("a parameter operand is not a constant (its value "
                      "must be known when the backward graph is built)");
    return failure();
  }
  SmallVector<int64_t> values;
  for (APInt a : attr.getValues<APInt>())
    values.push_back(a.getSExtValue());
  return values;
}

RankedTensorType GradientBuilder::typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

} // namespace kiln
