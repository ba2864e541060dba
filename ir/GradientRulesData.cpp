//===- GradientRulesData.cpp - Gradients of shape and data-movement ops ---===//
//
// This file implements the gradient rules of the views and data-movement
// ops: the reshape family and transpose undo themselves, expand and tile
// sum back, slice and pad exchange roles, concat and split likewise, and
// the gathers scatter-add their gradient into zeros (an embedding lookup's
// weight gradient).
//
//===----------------------------------------------------------------------===//

#include "ir/GradientRules.h"
#include "ir/KilnOps.h"

using namespace mlir;

namespace kiln::grad {

namespace {
/// A slice of `x` along `axis` from `start` to `end`.
Value sliceAxis(GradientBuilder &gb, Value x, int64_t axis, int64_t start,
                int64_t end) {
  return gb.create("kiln.slice", {x, gb.indices({start}), gb.indices({end}),
                                  gb.indices({axis}), gb.indices({1})});
}

/// Indices made non-negative (counted from the end of a dim of `size`) and
/// i64.
Value normalizedIndices(GradientBuilder &gb, Value indices, int64_t size) {
  Value i = gb.castTo(indices, IntegerType::get(indices.getContext(), 64));
  Value negative = gb.compare("kiln.less", i, gb.scalar(0, i));
  return gb.select(negative, gb.add(i, gb.scalar(size, i)), i);
}
} // namespace

KILN_GRADIENT_RULE(reshapeLike) {
  // reshape, flatten, squeeze, unsqueeze.
  out[0] = gb.reshape(g[0], GradientBuilder::typeOf(gb.operand(0)).getShape());
  return gb.status();
}

KILN_GRADIENT_RULE(transpose) {
  ArrayRef<int64_t> perm =
      gb.forward()->getAttrOfType<DenseI64ArrayAttr>("perm").asArrayRef();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  out[0] = gb.transpose(g[0], inverse);
  return gb.status();
}

KILN_GRADIENT_RULE(expand) {
  out[0] = gb.toOperand(g[0], 0);
  return gb.status();
}

KILN_GRADIENT_RULE(slice) {
  Value x = gb.operand(0);
  ArrayRef<int64_t> shape = GradientBuilder::typeOf(x).getShape();
  FailureOr<SmallVector<int64_t>> starts = gb.constantIndices(gb.operand(1)),
                                  ends = gb.constantIndices(gb.operand(2)),
                                  axes = gb.constantIndices(gb.operand(3)),
                                  steps = gb.constantIndices(gb.operand(4));
  if (failed(starts) || failed(ends) || failed(axes) || failed(steps))
    return failure();
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    int64_t dim = shape[axis];
    if ((*steps)[i] != 1)
      return gb.unsupported("slices with a step other than 1 are not "
                            "differentiated yet");
    auto clampIndex = [&](int64_t v) {
      v = v < 0 ? v + dim : v;
      return std::min(std::max<int64_t>(v, 0), dim);
    };
    int64_t start = clampIndex((*starts)[i]);
    int64_t end = std::max(start, clampIndex((*ends)[i]));
    pads[axis] = start;
    pads[rank + axis] = dim - end;
  }
  // The gradient is g in place, zeros around it.
  OpBuilder b(gb.forward()->getContext());
  out[0] = gb.create("kiln.pad", {g[0], gb.indices(pads), gb.scalar(0.0, g[0])},
                     {b.getNamedAttr("mode", b.getStringAttr("constant"))});
  return gb.status();
}

KILN_GRADIENT_RULE(pad) {
  auto mode = gb.forward()->getAttrOfType<StringAttr>("mode");
  if (mode && mode.getValue() != "constant")
    return gb.unsupported("only constant padding is differentiated");
  FailureOr<SmallVector<int64_t>> pads = gb.constantIndices(gb.operand(1));
  if (failed(pads))
    return failure();
  ArrayRef<int64_t> shape = GradientBuilder::typeOf(gb.operand(0)).getShape();
  int64_t rank = static_cast<int64_t>(shape.size());
  if (static_cast<int64_t>(pads->size()) != 2 * rank)
    return gb.unsupported("pads do not cover every dim");
  SmallVector<int64_t> starts, ends, axes, steps;
  for (int64_t d = 0; d < rank; ++d) {
    if ((*pads)[d] < 0 || (*pads)[rank + d] < 0)
      return gb.unsupported("negative pads (cropping) are not "
                            "differentiated yet");
    starts.push_back((*pads)[d]);
    ends.push_back((*pads)[d] + shape[d]);
    axes.push_back(d);
    steps.push_back(1);
  }
  if (gb.needs(0))
    out[0] = gb.create("kiln.slice", {g[0], gb.indices(starts),
                                      gb.indices(ends), gb.indices(axes),
                                      gb.indices(steps)});
  if (gb.needs(2)) { // The padding value's gradient: the sum outside x.
    Value inside = out[0]
                       ? out[0]
                       : gb.create("kiln.slice",
                                   {g[0], gb.indices(starts), gb.indices(ends),
                                    gb.indices(axes), gb.indices(steps)});
    Value insideSum = gb.reduceSum(inside, axes, false);
    out[2] = gb.sub(gb.reduceSum(g[0], axes, false), insideSum);
  }
  return gb.status();
}

KILN_GRADIENT_RULE(concat) {
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  int64_t offset = 0;
  for (unsigned i = 0; i < gb.forward()->getNumOperands(); ++i) {
    int64_t size = GradientBuilder::typeOf(gb.operand(i)).getDimSize(axis);
    if (gb.needs(i))
      out[i] = sliceAxis(gb, g[0], axis, offset, offset + size);
    offset += size;
  }
  return gb.status();
}

KILN_GRADIENT_RULE(split) {
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  SmallVector<Value> pieces;
  for (unsigned i = 0; i < gb.forward()->getNumResults(); ++i)
    pieces.push_back(g[i] ? g[i]
                          : gb.zeros(GradientBuilder::typeOf(gb.result(i))));
  OpBuilder b(gb.forward()->getContext());
  out[0] = pieces.size() == 1
               ? pieces[0]
               : gb.create("kiln.concat", pieces,
                           {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
  return gb.status();
}

KILN_GRADIENT_RULE(tile) {
  FailureOr<SmallVector<int64_t>> repeats = gb.constantIndices(gb.operand(1));
  if (failed(repeats))
    return failure();
  ArrayRef<int64_t> shape = GradientBuilder::typeOf(gb.operand(0)).getShape();
  // g as [r0, d0, r1, d1, ...], summed over the r's.
  SmallVector<int64_t> split, axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    axes.push_back(static_cast<int64_t>(split.size()));
    split.push_back((*repeats)[d]);
    split.push_back(shape[d]);
  }
  out[0] = gb.reshape(gb.reduceSum(gb.reshape(g[0], split), axes, false),
                      shape);
  return gb.status();
}

KILN_GRADIENT_RULE(gather) {
  // x[pre, V, post] gathered by I along axis a: g is [pre, I..., post].
  // Scatter-add g, with I's dims first, into zeros of [V, pre, post].
  Value x = gb.operand(0), indices = gb.operand(1);
  RankedTensorType xType = GradientBuilder::typeOf(x);
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  int64_t rank = xType.getRank();
  axis = axis < 0 ? axis + rank : axis;
  SmallVector<int64_t> iShape(GradientBuilder::typeOf(indices).getShape());
  Value gv = g[0];
  if (iShape.empty()) { // A rank-0 index: as one index of shape [1].
    SmallVector<int64_t> gShape(GradientBuilder::typeOf(gv).getShape());
    gShape.insert(gShape.begin() + axis, 1);
    gv = gb.reshape(gv, gShape);
    iShape.push_back(1);
    indices = gb.reshape(indices, iShape);
  }
  int64_t ir = static_cast<int64_t>(iShape.size());
  SmallVector<int64_t> perm, dataShape = {shape[axis]};
  for (int64_t d = 0; d < ir; ++d)
    perm.push_back(axis + d);
  for (int64_t d = 0; d < axis; ++d)
    perm.push_back(d), dataShape.push_back(shape[d]);
  for (int64_t d = axis + ir; d < rank - 1 + ir; ++d)
    perm.push_back(d);
  for (int64_t d = axis + 1; d < rank; ++d)
    dataShape.push_back(shape[d]);
  Value updates = gb.transpose(gv, perm);
  SmallVector<int64_t> idxShape(iShape);
  idxShape.push_back(1);
  Value idx = gb.reshape(normalizedIndices(gb, indices, shape[axis]), idxShape);
  OpBuilder b(gb.forward()->getContext());
  Value data = gb.zeros(RankedTensorType::get(dataShape, xType.getElementType()));
  Value scattered = gb.create(
      "kiln.scatter_nd", {data, idx, updates},
      {b.getNamedAttr("reduction", b.getStringAttr("add"))});
  SmallVector<int64_t> back;
  for (int64_t d = 1; d <= axis; ++d)
    back.push_back(d);
  back.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    back.push_back(d);
  out[0] = gb.transpose(scattered, back);
  return gb.status();
}

KILN_GRADIENT_RULE(gatherElements) {
  Value x = gb.operand(0);
  RankedTensorType xType = GradientBuilder::typeOf(x);
  int64_t axis = gb.forward()->getAttrOfType<IntegerAttr>("axis").getInt();
  axis = axis < 0 ? axis + xType.getRank() : axis;
  Value idx = normalizedIndices(gb, gb.operand(1), xType.getDimSize(axis));
  OpBuilder b(gb.forward()->getContext());
  out[0] = gb.create("kiln.scatter_elements",
                     {gb.zeros(xType), idx, g[0]},
                     {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
                      b.getNamedAttr("reduction", b.getStringAttr("add"))});
  return gb.status();
}

} // namespace kiln::grad
