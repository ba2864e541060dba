//===- ShapeInferenceData.cpp - Shape and data-movement op result types ---===//
//
// This file implements result-type inference and verification for the ops
// that compute shapes or move data: constant_of_shape, range, reshape,
// flatten, squeeze, unsqueeze, transpose, concat, split, slice, expand, tile,
// pad, shape, size, gather*, one_hot, resize, unique and bitcast (random
// draws: ShapeInferenceRandom.cpp). Parameter operands produced
// by constants give static dims; otherwise the dims are dynamic and the rank
// comes from the parameter's static length.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace kiln::infer;

static constexpr int64_t kDyn = ShapedType::kDynamic;

static bool isDyn(int64_t dim) { return ShapedType::isDynamic(dim); }

static Type i64Type(const InferContext &ctx) {
  return IntegerType::get(ctx.getContext(), 64);
}

/// The product of dims; kDynamic when one is dynamic.
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t d : dims) {
    if (isDyn(d))
      return kDyn;
    result = saturatingMul(result, d);
  }
  return result;
}

LogicalResult kiln::infer::constantOfShape(const InferContext &ctx,
                                           Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<ElementsAttr> value = ctx.elementsAttr("value");
  FailureOr<SmallVector<int64_t>> shape = shapeParam(ctx, 0);
  if (failed(value) || failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, value->getElementType()));
  return success();
}

LogicalResult kiln::verifiers::constantOfShape(Operation *op) {
  auto value = op->getAttrOfType<ElementsAttr>("value");
  if (value.getNumElements() != 1)
    return op->emitOpError("attribute 'value' must have one element, got ")
           << value.getType();
  return success();
}

LogicalResult kiln::infer::range(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> start = ctx.tensor(0);
  if (failed(start))
    return failure();
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<RankedTensorType> type = ctx.tensor(i);
    if (failed(type))
      return failure();
    if (type->getRank() != 0 ||
        type->getElementType() != start->getElementType())
      return ctx.emitError("operands must be rank-0 tensors of one dtype, "
                           "operand #",
                           i, " is ", *type, " (operand #0 is ", *start, ")");
  }
  int64_t count = kDyn;
  auto s = ctx.constFloats(0), l = ctx.constFloats(1), d = ctx.constFloats(2);
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
    if ((*d)[0] == 0)
      return ctx.emitError("delta must not be zero");
    double n = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
    if (std::isnan(n) || n > static_cast<double>(kiln::kMaxTensorElements))
      return ctx.emitError("the range has ", n,
                           " elements, more than the limit of 2^40");
    count = n > 0 ? static_cast<int64_t>(n) : 0;
  }
  results.push_back(RankedTensorType::get({count}, start->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::reshape(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> allowzero = ctx.i64Attr("allowzero");
  FailureOr<int64_t> rank = ctx.paramLength(1, /*requireStatic=*/true);
  if (failed(x) || failed(allowzero) || failed(rank))
    return failure();
  std::optional<SmallVector<int64_t>> values = ctx.constInts(1);
  if (!values) {
    results.push_back(RankedTensorType::get(SmallVector<int64_t>(*rank, kDyn),
                                            x->getElementType()));
    return success();
  }
  SmallVector<int64_t> shape;
  int64_t inferred = -1;
  bool sawZero = false;
  for (auto [i, v] : llvm::enumerate(*values)) {
    if (v < -1)
      return ctx.emitError("shape value ", v, " is invalid");
    if (v == -1) {
      if (inferred >= 0)
        return ctx.emitError("shape has more than one -1");
      inferred = i;
      shape.push_back(kDyn);
    } else if (v == 0 && !*allowzero) {
      if (static_cast<int64_t>(i) >= x->getRank())
        return ctx.emitError("shape value 0 at index ", i,
                             " copies a dim that ", *x, " does not have");
      shape.push_back(x->getDimSize(i));
    } else {
      sawZero |= v == 0;
      shape.push_back(v);
    }
  }
  if (sawZero && inferred >= 0)
    return ctx.emitError("shape has both 0 (with allowzero) and -1");
  int64_t total = product(x->getShape());
  if (inferred >= 0) {
    SmallVector<int64_t> others(shape);
    others.erase(others.begin() + inferred);
    int64_t known = product(others);
    if (!isDyn(total) && !isDyn(known)) {
      if (known == 0 || total % known != 0)
        return ctx.emitError("cannot reshape ", *x, " to ",
                             formatShape(*values));
      shape[inferred] = total / known;
    }
  } else {
    int64_t out = product(shape);
    if (!isDyn(total) && !isDyn(out) && total != out)
      return ctx.emitError("cannot reshape ", *x, " (", total, " elements) to ",
                           formatShape(shape), " (", out, " elements)");
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::flatten(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(x) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x,
                       /*inclusive=*/true)))
    return failure();
  ArrayRef<int64_t> in = x->getShape();
  results.push_back(RankedTensorType::get(
      {product(in.take_front(*axis)), product(in.drop_front(*axis))},
      x->getElementType()));
  return success();
}

LogicalResult kiln::infer::squeeze(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/true);
  if (failed(x) || failed(count))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<int64_t> shape;
  if (*count == 0) {
    if (!x->hasStaticShape())
      return ctx.emitError("squeeze without axes of a tensor whose size is "
                           "only known at run time is not supported (the "
                           "result's rank would depend on the data): ",
                           *x, "; give the axes explicitly");
    for (int64_t d : x->getShape())
      if (d != 1)
        shape.push_back(d);
  } else if (std::optional<SmallVector<int64_t>> axes = ctx.constInts(1)) {
    SmallVector<bool> removed(rank, false);
    for (int64_t axis : *axes) {
      std::optional<int64_t> norm = normalizeAxis(axis, rank);
      if (!norm || removed[*norm])
        return ctx.emitError("axis ", axis, " is out of range or repeated for ",
                             *x);
      int64_t d = x->getDimSize(*norm);
      if (!isDyn(d) && d != 1)
        return ctx.emitError("cannot squeeze axis ", axis, " of size ", d,
                             " in ", *x);
      removed[*norm] = true;
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!removed[i])
        shape.push_back(x->getDimSize(i));
  } else {
    if (*count > rank)
      return ctx.emitError("cannot squeeze ", *count, " axes of ", *x);
    shape.assign(rank - *count, kDyn);
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::unsqueeze(const InferContext &ctx,
                                     Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/true);
  if (failed(x) || failed(count))
    return failure();
  int64_t rank = x->getRank() + *count;
  SmallVector<int64_t> shape(rank, kDyn);
  if (std::optional<SmallVector<int64_t>> axes = ctx.constInts(1)) {
    SmallVector<bool> inserted(rank, false);
    for (int64_t axis : *axes) {
      std::optional<int64_t> norm = normalizeAxis(axis, rank);
      if (!norm || inserted[*norm])
        return ctx.emitError("axis ", axis,
                             " is out of range or repeated for "
                             "an output of rank ",
                             rank);
      inserted[*norm] = true;
    }
    unsigned next = 0;
    for (int64_t i = 0; i < rank; ++i)
      shape[i] = inserted[i] ? 1 : x->getDimSize(next++);
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::transpose(const InferContext &ctx,
                                     Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<SmallVector<int64_t>> perm = ctx.i64ArrayAttr("perm");
  if (failed(x) || failed(perm))
    return failure();
  int64_t rank = x->getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm->size()) == rank;
  for (int64_t p : *perm) {
    if (!valid || p < 0 || p >= rank || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return ctx.emitError("attribute 'perm' = [", formatShape(*perm),
                         "] is not a permutation of [0, ", rank, ") for ", *x);
  SmallVector<int64_t> shape;
  for (int64_t p : *perm)
    shape.push_back(x->getDimSize(p));
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Concat, split, slice, expand, tile, pad
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::concat(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1, /*atLeast=*/true)))
    return failure();
  FailureOr<RankedTensorType> first = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(first) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, first->getRank(), *first)))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (unsigned i = 1; i < ctx.getOperands().size(); ++i) {
    FailureOr<RankedTensorType> type = ctx.tensor(i);
    if (failed(type))
      return failure();
    if (type->getRank() != first->getRank() ||
        type->getElementType() != first->getElementType())
      return ctx.emitError("operand #", i, " (", *type,
                           ") must have the rank and element type of "
                           "operand #0 (",
                           *first, ")");
    for (int64_t d = 0; d < first->getRank(); ++d) {
      int64_t a = shape[d], b = type->getDimSize(d);
      if (d == *axis) {
        shape[d] = isDyn(a) || isDyn(b) ? kDyn : a + b;
      } else if (isDyn(a)) {
        shape[d] = b;
      } else if (!isDyn(b) && a != b) {
        return ctx.emitError("operand #", i, " (", *type,
                             ") differs from the others in dim ", d, " (", a,
                             ")");
      }
    }
  }
  results.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

LogicalResult kiln::infer::split(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/true);
  if (failed(x) || failed(axis) || failed(count) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  SmallVector<int64_t> sizes(*count, kDyn);
  if (std::optional<SmallVector<int64_t>> values = ctx.constInts(1)) {
    int64_t sum = 0;
    for (int64_t v : *values) {
      if (v < 0)
        return ctx.emitError("split size ", v, " is negative");
      sum = saturatingAdd(sum, v);
    }
    int64_t dim = x->getDimSize(*axis);
    if (!isDyn(dim) && sum != dim)
      return ctx.emitError("split sizes [", formatShape(*values), "] sum to ",
                           sum, ", but dim ", *axis, " of ", *x, " is ", dim);
    sizes = *values;
  }
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(x->getShape());
    shape[*axis] = size;
    results.push_back(RankedTensorType::get(shape, x->getElementType()));
  }
  return success();
}

LogicalResult kiln::infer::slice(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(5)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  if (failed(x))
    return failure();
  int64_t count = kDyn;
  for (unsigned i = 1; i < 5; ++i) {
    FailureOr<int64_t> length = ctx.paramLength(i, /*requireStatic=*/false);
    if (failed(length))
      return failure();
    if (isDyn(count))
      count = *length;
    else if (!isDyn(*length) && *length != count)
      return ctx.emitError("starts, ends, axes and steps must have one "
                           "length, got ",
                           count, " and ", *length);
  }
  int64_t rank = x->getRank();
  SmallVector<int64_t> shape(x->getShape());
  std::optional<SmallVector<int64_t>> axes = ctx.constInts(3);
  if (!axes) {
    results.push_back(RankedTensorType::get(SmallVector<int64_t>(rank, kDyn),
                                            x->getElementType()));
    return success();
  }
  auto starts = ctx.constInts(1), ends = ctx.constInts(2),
       steps = ctx.constInts(4);
  SmallVector<bool> seen(rank, false);
  for (auto [k, axis] : llvm::enumerate(*axes)) {
    std::optional<int64_t> norm = normalizeAxis(axis, rank);
    if (!norm || seen[*norm])
      return ctx.emitError("axis ", axis, " is out of range or repeated for ",
                           *x);
    seen[*norm] = true;
    int64_t d = x->getDimSize(*norm);
    if (steps && k < steps->size() && (*steps)[k] == 0)
      return ctx.emitError("slice step must not be zero");
    if (isDyn(d) || !starts || !ends || !steps || k >= starts->size() ||
        k >= ends->size() || k >= steps->size()) {
      shape[*norm] = kDyn;
      continue;
    }
    // Indices past the ends are clamped below; bounding them (and the step)
    // first keeps the arithmetic from overflowing.
    const int64_t bound = kiln::kMaxTensorElements + 1;
    int64_t start = std::clamp<int64_t>((*starts)[k], -bound, bound);
    int64_t end = std::clamp<int64_t>((*ends)[k], -bound, bound);
    int64_t step = std::clamp<int64_t>((*steps)[k], -bound, bound);
    if (start < 0)
      start += d;
    if (end < 0)
      end += d;
    int64_t length;
    if (d == 0) {
      length = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, d);
      end = std::clamp<int64_t>(end, 0, d);
      length = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, d - 1);
      end = std::clamp<int64_t>(end, -1, d - 1);
      length = start > end ? (start - end - 1) / -step + 1 : 0;
    }
    shape[*norm] = length;
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::expand(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> rank = ctx.paramLength(1, /*requireStatic=*/true);
  if (failed(x) || failed(rank))
    return failure();
  SmallVector<int64_t> target(*rank, kDyn);
  if (std::optional<SmallVector<int64_t>> values = ctx.constInts(1))
    target = *values;
  for (int64_t v : target)
    if (!isDyn(v) && v < 0)
      return ctx.emitError("shape value ", v, " is negative");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(x->getShape(), target);
  if (failed(shape))
    return ctx.emitError("cannot expand ", *x, " to ", formatShape(target));
  results.push_back(RankedTensorType::get(*shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::tile(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/false);
  if (failed(x) || failed(count))
    return failure();
  if (!isDyn(*count) && *count != x->getRank())
    return ctx.emitError("repeats must have ", x->getRank(),
                         " values (the rank of ", *x, "), got ", *count);
  SmallVector<int64_t> shape(x->getRank(), kDyn);
  if (std::optional<SmallVector<int64_t>> repeats = ctx.constInts(1)) {
    for (auto [i, r] : llvm::enumerate(*repeats)) {
      if (r < 0)
        return ctx.emitError("repeat ", r, " is negative");
      int64_t d = x->getDimSize(i);
      shape[i] = isDyn(d) ? kDyn : saturatingMul(d, r);
    }
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::pad(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> count = ctx.paramLength(1, /*requireStatic=*/false);
  if (failed(x) || failed(count))
    return failure();
  int64_t rank = x->getRank();
  if (!isDyn(*count) && *count != 2 * rank)
    return ctx.emitError("pads must have ", 2 * rank, " values for ", *x,
                         ", got ", *count);
  SmallVector<int64_t> shape(rank, kDyn);
  if (std::optional<SmallVector<int64_t>> pads = ctx.constInts(1)) {
    for (int64_t i = 0; i < rank; ++i) {
      int64_t d = x->getDimSize(i);
      if (isDyn(d))
        continue;
      shape[i] = d + (*pads)[i] + (*pads)[rank + i];
      if (shape[i] < 0)
        return ctx.emitError("pads [", formatShape(*pads), "] make dim ", i,
                             " of ", *x, " negative");
    }
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::verifiers::pad(Operation *op) {
  InferContext ctx(op);
  if (failed(ctx.enumAttr("mode", {"constant", "reflect", "edge", "wrap"})))
    return failure();
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto value = llvm::cast<RankedTensorType>(op->getOperand(2).getType());
  if (value.getRank() != 0 || value.getElementType() != x.getElementType())
    return ctx.emitError("value must be a rank-0 tensor of ",
                         x.getElementType(), ", got ", value);
  return success();
}

LogicalResult kiln::verifiers::trilu(Operation *op) {
  InferContext ctx(op);
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto k = llvm::cast<RankedTensorType>(op->getOperand(1).getType());
  if (x.getRank() < 2)
    return ctx.emitError("operand must have rank >= 2, got ", x);
  if (k.getRank() > 1 || k.getNumElements() != 1)
    return ctx.emitError("k must be a rank-0 tensor, got ", k);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape, size, gather, scatter, one_hot
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::shapeOf(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> start = ctx.i64Attr("start"), end = ctx.i64Attr("end");
  if (failed(x) || failed(start) || failed(end) ||
      failed(checkAxis(ctx, "start", *start, x->getRank(), *x, true)) ||
      failed(checkAxis(ctx, "end", *end, x->getRank(), *x, true)))
    return failure();
  results.push_back(RankedTensorType::get({std::max<int64_t>(*end - *start, 0)},
                                          i64Type(ctx)));
  return success();
}

LogicalResult kiln::infer::sizeOf(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)) || failed(ctx.tensor(0)))
    return failure();
  results.push_back(RankedTensorType::get({}, i64Type(ctx)));
  return success();
}

LogicalResult kiln::infer::nonZero(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  if (failed(x))
    return failure();
  // The count of non-zero elements depends on the values; it is 0 only when
  // x is statically empty.
  int64_t count = x->hasStaticShape() && x->getNumElements() == 0
                      ? 0
                      : ShapedType::kDynamic;
  results.push_back(RankedTensorType::get({x->getRank(), count}, i64Type(ctx)));
  return success();
}

LogicalResult kiln::infer::gather(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), indices = ctx.tensor(1);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(x) || failed(indices) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  ArrayRef<int64_t> in = x->getShape();
  SmallVector<int64_t> shape(in.take_front(*axis));
  llvm::append_range(shape, indices->getShape());
  llvm::append_range(shape, in.drop_front(*axis + 1));
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::infer::gatherElements(const InferContext &ctx,
                                          Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), indices = ctx.tensor(1);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(x) || failed(indices) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  if (indices->getRank() != x->getRank())
    return ctx.emitError("indices must have the rank of x, got ", *indices,
                         " and ", *x);
  results.push_back(
      RankedTensorType::get(indices->getShape(), x->getElementType()));
  return success();
}

LogicalResult kiln::infer::gatherND(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(2)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0), indices = ctx.tensor(1);
  FailureOr<int64_t> batchDims = ctx.i64Attr("batch_dims");
  if (failed(x) || failed(indices) || failed(batchDims))
    return failure();
  int64_t r = x->getRank(), q = indices->getRank(), b = *batchDims;
  if (q < 1 || r < 1 || b < 0 || b >= std::min(q, r))
    return ctx.emitError("batch_dims ", b, " is invalid for ", *x,
                         " and indices ", *indices);
  int64_t last = indices->getDimSize(q - 1);
  if (isDyn(last))
    return ctx.emitError("the last dim of indices must be static, got ",
                         *indices);
  if (last < 1 || last > r - b)
    return ctx.emitError("the last dim of indices (", last, ") must be in [1, ",
                         r - b, "] for ", *x);
  SmallVector<int64_t> shape(indices->getShape().drop_back());
  llvm::append_range(shape, x->getShape().drop_front(b + last));
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::verifiers::scatter(Operation *op) {
  InferContext ctx(op);
  if (failed(ctx.enumAttr("reduction", {"none", "add", "mul", "max", "min"})))
    return failure();
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  auto updates = llvm::cast<RankedTensorType>(op->getOperand(2).getType());
  if (x.getElementType() != updates.getElementType())
    return ctx.emitError("updates must have x's element type, got ", updates,
                         " and ", x);
  return success();
}

LogicalResult kiln::infer::oneHot(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> indices = ctx.tensor(0), values = ctx.tensor(2);
  FailureOr<int64_t> axis = ctx.i64Attr("axis");
  if (failed(indices) || failed(values) || failed(axis) ||
      failed(checkAxis(ctx, "axis", *axis, indices->getRank(), *indices,
                       /*inclusive=*/true)))
    return failure();
  if (values->getRank() != 1 ||
      !(isDyn(values->getDimSize(0)) || values->getDimSize(0) == 2))
    return ctx.emitError("values must be [off, on], got ", *values);
  int64_t depth = kDyn;
  if (auto d = ctx.constFloats(1); d && d->size() == 1) {
    if ((*d)[0] < 1)
      return ctx.emitError("depth must be >= 1, got ", (*d)[0]);
    depth = static_cast<int64_t>((*d)[0]);
  }
  SmallVector<int64_t> shape(indices->getShape());
  shape.insert(shape.begin() + *axis, depth);
  results.push_back(RankedTensorType::get(shape, values->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::resize(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(3)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> scalesLength = ctx.paramLength(1, false);
  FailureOr<int64_t> sizesLength = ctx.paramLength(2, false);
  FailureOr<StringRef> policy = ctx.strAttr("keep_aspect_ratio_policy");
  if (failed(x) || failed(scalesLength) || failed(sizesLength) ||
      failed(policy))
    return failure();
  int64_t rank = x->getRank();
  if (!((*scalesLength == 0 && *sizesLength == rank) ||
        (*scalesLength == rank && *sizesLength == 0)))
    return ctx.emitError("exactly one of scales and sizes must be empty and "
                         "the other have ",
                         rank, " values for ", *x, ", got ", *scalesLength,
                         " scales and ", *sizesLength, " sizes");
  SmallVector<int64_t> shape(rank, kDyn);
  if (*sizesLength == rank) {
    if (std::optional<SmallVector<int64_t>> sizes = ctx.constInts(2);
        sizes && *policy == "stretch")
      shape = *sizes;
  } else if (std::optional<SmallVector<double>> scales = ctx.constFloats(1)) {
    for (int64_t i = 0; i < rank; ++i) {
      if ((*scales)[i] <= 0)
        return ctx.emitError("scale ", (*scales)[i], " must be positive");
      int64_t d = x->getDimSize(i);
      if (isDyn(d))
        continue;
      double size = std::floor(d * (*scales)[i]);
      if (!(size <= static_cast<double>(kiln::kMaxTensorElements)))
        return ctx.emitError("scale ", (*scales)[i], " makes dim ", i,
                             " larger than the limit of 2^40");
      shape[i] = static_cast<int64_t>(size);
    }
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

LogicalResult kiln::verifiers::resize(Operation *op) {
  InferContext ctx(op);
  auto x = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  FailureOr<SmallVector<double>> roi = ctx.f32ArrayAttr("roi");
  if (failed(ctx.enumAttr("mode", {"nearest", "linear", "cubic"})) ||
      failed(ctx.enumAttr("keep_aspect_ratio_policy",
                          {"stretch", "not_larger", "not_smaller"})) ||
      failed(roi))
    return failure();
  if (!roi->empty() && static_cast<int64_t>(roi->size()) != 2 * x.getRank())
    return ctx.emitError("attribute 'roi' must be empty or have ",
                         2 * x.getRank(), " values, got ", roi->size());
  return success();
}

//===----------------------------------------------------------------------===//
// Unique and bitcast
//===----------------------------------------------------------------------===//

LogicalResult kiln::infer::unique(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<int64_t> axis = ctx.i64Attr("axis"), sorted = ctx.i64Attr("sorted");
  if (failed(x) || failed(axis) || failed(sorted))
    return failure();
  if (*sorted != 0 && *sorted != 1)
    return ctx.emitError("attribute 'sorted' must be 0 or 1, got ", *sorted);
  if (*axis != -1 && failed(checkAxis(ctx, "axis", *axis, x->getRank(), *x)))
    return failure();
  // The count of unique values depends on the values; it is 0 only when the
  // counted dim is statically empty.
  int64_t counted = *axis == -1 ? product(x->getShape()) : x->getDimSize(*axis);
  int64_t u = counted == 0 ? 0 : kDyn;
  SmallVector<int64_t> shape = {u};
  if (*axis != -1) {
    shape.assign(x->getShape().begin(), x->getShape().end());
    shape[*axis] = u;
  }
  results.push_back(RankedTensorType::get(shape, x->getElementType()));
  results.push_back(RankedTensorType::get({u}, i64Type(ctx)));
  results.push_back(RankedTensorType::get({counted}, i64Type(ctx)));
  results.push_back(RankedTensorType::get({u}, i64Type(ctx)));
  return success();
}

/// The ONNX bit width of an element type (bool is a byte).
static unsigned onnxBits(Type t) {
  return t.isInteger(1) ? 8 : t.getIntOrFloatBitWidth();
}

LogicalResult kiln::infer::bitcast(const InferContext &ctx, Results &results) {
  if (failed(ctx.expectOperands(1)))
    return failure();
  FailureOr<RankedTensorType> x = ctx.tensor(0);
  FailureOr<Type> to = ctx.typeAttr("to");
  if (failed(x) || failed(to))
    return failure();
  if (!to->isIntOrFloat() || onnxBits(*to) != onnxBits(x->getElementType()))
    return ctx.emitError(
        "bitcast needs a dtype of the same width: ", x->getElementType(), " (",
        onnxBits(x->getElementType()), " bits) to ", *to);
  results.push_back(RankedTensorType::get(x->getShape(), *to));
  return success();
}
