//===- ShapeOps.cpp - Reshaping, slicing and shape-query kernels ----------===//
//
// This file implements the reference CPU kernels of the kiln ops that change
// a tensor's shape or select a strided part of it: reshape, flatten,
// squeeze, unsqueeze, transpose, concat, split, slice and expand; and of the
// ops that build tensors from shapes: shape, size, constant_of_shape and
// range. Reshape-like ops return views that share the input's storage when
// it is contiguous; the others return new contiguous tensors.
//
//===----------------------------------------------------------------------===//

#include "DataMovementKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {
namespace datamovement {
namespace {

//===----------------------------------------------------------------------===//
// reshape, flatten, squeeze, unsqueeze
//===----------------------------------------------------------------------===//

Status reshapeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "reshape", 2));
  const Tensor &x = ctx.input(0);
  auto requested = readIntParam(ctx.input(1), "reshape", "shape");
  if (!requested)
    return requested.status();
  bool allowZero = ctx.attrs.getInt("allowzero", 0) != 0;
  Shape shape = *requested;
  int64_t inferAt = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      KILN_CHECK(inferAt < 0, "reshape: more than one -1 in shape ",
                 intsToString(*requested));
      inferAt = static_cast<int64_t>(i);
      continue;
    }
    KILN_CHECK(v >= 0, "reshape: invalid dimension ", v, " in shape ",
               intsToString(*requested));
    if (v == 0 && !allowZero) {
      KILN_CHECK(static_cast<int64_t>(i) < x.rank(), "reshape: shape ",
                 intsToString(*requested), " copies dimension ", i,
                 " (0) but the input ", x.typeString(), " has rank ", x.rank());
      shape[i] = x.dim(i);
    }
    known *= shape[i];
  }
  KILN_CHECK(!(allowZero && inferAt >= 0 &&
               std::count(shape.begin(), shape.end(), 0) > 0),
             "reshape: shape ", intsToString(*requested),
             " has both 0 and -1 with allowzero=1");
  int64_t n = x.numel();
  if (inferAt >= 0) {
    KILN_CHECK(known != 0, "reshape: cannot infer the -1 in shape ",
               intsToString(*requested), " for input ", x.typeString(),
               " (the other dims multiply to 0)");
    KILN_CHECK(n % known == 0, "reshape: cannot reshape ", x.typeString(),
               " to ", intsToString(*requested));
    shape[inferAt] = n / known;
  }
  KILN_CHECK(numElements(shape) == n, "reshape: cannot reshape ",
             x.typeString(), " (", n, " elements) to ", shapeToString(shape));
  ctx.outputs[0] = x.reshape(shape);
  return Status::ok();
}

Status flattenKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "flatten", 1));
  const Tensor &x = ctx.input(0);
  int64_t axis = ctx.attrs.getInt("axis", 1);
  if (axis < 0)
    axis += x.rank();
  KILN_CHECK(axis >= 0 && axis <= x.rank(), "flatten: axis ",
             ctx.attrs.getInt("axis", 1), " is out of range for ",
             x.typeString());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < axis ? outer : inner) *= x.dim(i);
  ctx.outputs[0] = x.reshape({outer, inner});
  return Status::ok();
}

Status squeezeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "squeeze", 2));
  const Tensor &x = ctx.input(0);
  auto axes = readIntParam(ctx.input(1), "squeeze", "axes");
  if (!axes)
    return axes.status();
  std::vector<bool> drop(x.rank(), false);
  if (axes->empty()) {
    for (int64_t i = 0; i < x.rank(); ++i)
      drop[i] = x.dim(i) == 1;
  } else {
    for (int64_t a : *axes) {
      int64_t axis = a;
      KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, x.rank(), "squeeze"));
      KILN_CHECK(!drop[axis], "squeeze: axis ", a, " is repeated");
      KILN_CHECK(x.dim(axis) == 1, "squeeze: axis ", a, " of ", x.typeString(),
                 " has size ", x.dim(axis), ", not 1");
      drop[axis] = true;
    }
  }
  Shape shape;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[i])
      shape.push_back(x.dim(i));
  ctx.outputs[0] = x.reshape(shape);
  return Status::ok();
}

Status unsqueezeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "unsqueeze", 2));
  const Tensor &x = ctx.input(0);
  auto axes = readIntParam(ctx.input(1), "unsqueeze", "axes");
  if (!axes)
    return axes.status();
  int64_t outRank = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(outRank, false);
  for (int64_t a : *axes) {
    int64_t axis = a;
    KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, outRank, "unsqueeze"));
    KILN_CHECK(!inserted[axis], "unsqueeze: axis ", a, " is repeated");
    inserted[axis] = true;
  }
  Shape shape;
  int64_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(inserted[i] ? 1 : x.dim(next++));
  ctx.outputs[0] = x.reshape(shape);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// transpose, concat, split
//===----------------------------------------------------------------------===//

Status transposeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "transpose", 1));
  const Tensor &x = ctx.input(0);
  std::vector<int64_t> perm = ctx.attrs.has("perm") ? ctx.attrs.getInts("perm")
                                                    : std::vector<int64_t>();
  if (perm.empty() && x.rank() > 0 && !ctx.attrs.has("perm"))
    for (int64_t i = x.rank() - 1; i >= 0; --i)
      perm.push_back(i);
  KILN_CHECK(static_cast<int64_t>(perm.size()) == x.rank(), "transpose: perm ",
             intsToString(perm), " does not match the rank of ",
             x.typeString());
  std::vector<bool> seen(x.rank(), false);
  for (int64_t &p : perm) {
    int64_t orig = p;
    KILN_RETURN_IF_ERROR(
        normalizeAxisChecked(p, x.rank(), "transpose", "perm entry"));
    KILN_CHECK(!seen[p], "transpose: perm entry ", orig, " is repeated");
    seen[p] = true;
  }
  ctx.outputs[0] = x.permute(perm).contiguous();
  return Status::ok();
}

/// Copies `x` (contiguous) into `out` (contiguous) as the block starting at
/// `axisOffset` along `axis`.
void copyBlockAlongAxis(const Tensor &x, Tensor &out, int64_t axis,
                        int64_t axisOffset, bool intoOut) {
  // When intoOut is false the roles flip: the block of `out` is read into x.
  size_t es = dtypeSize(x.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.dim(i);
  for (int64_t i = axis + 1; i < x.rank(); ++i)
    inner *= x.dim(i);
  size_t chunk = static_cast<size_t>(x.dim(axis) * inner) * es;
  size_t outRow = static_cast<size_t>(out.dim(axis) * inner) * es;
  size_t skip = static_cast<size_t>(axisOffset * inner) * es;
  char *xp = static_cast<char *>(x.rawData());
  char *op = static_cast<char *>(out.rawData());
  if (chunk == 0)
    return;
  for (int64_t o = 0; o < outer; ++o) {
    char *blk = op + o * outRow + skip;
    if (intoOut)
      std::memcpy(blk, xp + o * chunk, chunk);
    else
      std::memcpy(xp + o * chunk, blk, chunk);
  }
}

Status concatKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() >= 1, "concat: expected at least one operand");
  KILN_RETURN_IF_ERROR(checkArity(ctx, "concat", ctx.numInputs()));
  const Tensor &first = ctx.input(0);
  KILN_CHECK(first.rank() >= 1, "concat: operands must have rank >= 1, got ",
             first.typeString());
  int64_t axis = ctx.attrs.getInt("axis", 0);
  KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, first.rank(), "concat"));
  Shape shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const Tensor &t = ctx.input(i);
    KILN_CHECK(t.dtype() == first.dtype() && t.rank() == first.rank(),
               "concat: operand ", i, " ", t.typeString(),
               " does not match operand 0 ", first.typeString());
    for (int64_t d = 0; d < t.rank(); ++d)
      KILN_CHECK(d == axis || t.dim(d) == first.dim(d), "concat: operand ", i,
                 " ", t.typeString(), " does not match operand 0 ",
                 first.typeString(), " outside axis ", axis);
    shape[axis] += t.dim(axis);
  }
  Tensor out = Tensor::empty(first.dtype(), shape);
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    Tensor t = ctx.input(i).contiguous();
    copyBlockAlongAxis(t, out, axis, offset, /*intoOut=*/true);
    offset += t.dim(axis);
  }
  ctx.outputs[0] = out;
  return Status::ok();
}

Status splitKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "split", 2));
  Tensor x = ctx.input(0).contiguous();
  KILN_CHECK(x.rank() >= 1, "split: operand must have rank >= 1, got ",
             x.typeString());
  int64_t axis = ctx.attrs.getInt("axis", 0);
  KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, x.rank(), "split"));
  auto sizesOr = readIntParam(ctx.input(1), "split", "sizes");
  if (!sizesOr)
    return sizesOr.status();
  std::vector<int64_t> sizes = *sizesOr;
  int64_t n = static_cast<int64_t>(ctx.outputs.size());
  int64_t dim = x.dim(axis);
  if (sizes.empty()) {
    // Split-18 num_outputs rule: equal chunks of ceil(dim / n), last smaller.
    KILN_CHECK(n > 0, "split: no result slots");
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0, left = dim; i < n; ++i) {
      sizes.push_back(std::min(chunk, left));
      left -= sizes.back();
    }
  }
  KILN_CHECK(static_cast<int64_t>(sizes.size()) == n, "split: ", sizes.size(),
             " sizes for ", n, " results");
  int64_t total = 0;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, "split: negative size ", s, " in ", intsToString(sizes));
    total += s;
  }
  KILN_CHECK(total == dim, "split: sizes ", intsToString(sizes), " sum to ",
             total, " but axis ", axis, " of ", x.typeString(), " has size ",
             dim);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    Shape shape = x.shape();
    shape[axis] = sizes[i];
    Tensor part = Tensor::empty(x.dtype(), shape);
    copyBlockAlongAxis(part, x, axis, offset, /*intoOut=*/false);
    offset += sizes[i];
    ctx.outputs[i] = part;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// slice, expand
//===----------------------------------------------------------------------===//

Status sliceKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "slice", 5));
  const Tensor &x = ctx.input(0);
  auto starts = readIntParam(ctx.input(1), "slice", "starts");
  if (!starts)
    return starts.status();
  auto ends = readIntParam(ctx.input(2), "slice", "ends");
  if (!ends)
    return ends.status();
  auto axesOr = readIntParam(ctx.input(3), "slice", "axes");
  if (!axesOr)
    return axesOr.status();
  auto stepsOr = readIntParam(ctx.input(4), "slice", "steps");
  if (!stepsOr)
    return stepsOr.status();
  size_t k = starts->size();
  std::vector<int64_t> axes = *axesOr, steps = *stepsOr;
  if (axes.empty())
    for (size_t i = 0; i < k; ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(k, 1);
  KILN_CHECK(ends->size() == k && axes.size() == k && steps.size() == k,
             "slice: starts, ends, axes and steps must have the same length, "
             "got ",
             k, ", ", ends->size(), ", ", axes.size(), ", ", steps.size());
  Shape shape = x.shape(), strides = x.strides();
  int64_t offset = x.offset();
  std::vector<bool> seen(x.rank(), false);
  for (size_t i = 0; i < k; ++i) {
    int64_t axis = axes[i];
    KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, x.rank(), "slice"));
    KILN_CHECK(!seen[axis], "slice: axis ", axes[i], " is repeated");
    seen[axis] = true;
    int64_t step = steps[i];
    KILN_CHECK(step != 0, "slice: step 0 for axis ", axes[i]);
    int64_t dim = x.dim(axis);
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t count;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
      if (dim == 0)
        count = 0;
    }
    shape[axis] = count;
    if (count > 0)
      offset += start * strides[axis];
    strides[axis] *= step;
  }
  ctx.outputs[0] = makeView(x, shape, strides, offset).clone();
  return Status::ok();
}

Status expandKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "expand", 2));
  const Tensor &x = ctx.input(0);
  auto target = readIntParam(ctx.input(1), "expand", "shape");
  if (!target)
    return target.status();
  int64_t rank = std::max<int64_t>(x.rank(), target->size());
  Shape shape(rank), strides(rank, 0);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t xi = i - (rank - x.rank());
    int64_t ti = i - (rank - static_cast<int64_t>(target->size()));
    int64_t xd = xi >= 0 ? x.dim(xi) : 1;
    int64_t td = ti >= 0 ? (*target)[ti] : 1;
    KILN_CHECK(td >= 0, "expand: invalid dimension ", td, " in shape ",
               intsToString(*target));
    KILN_CHECK(xd == td || xd == 1 || td == 1, "expand: cannot broadcast ",
               x.typeString(), " to shape ", intsToString(*target));
    shape[i] = xd == 1 ? td : xd;
    strides[i] = (xi >= 0 && xd != 1) ? x.strides()[xi] : 0;
  }
  ctx.outputs[0] = makeView(x, shape, strides, x.offset()).clone();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// shape, size, constant_of_shape, range
//===----------------------------------------------------------------------===//

Status shapeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "shape", 1));
  const Tensor &x = ctx.input(0);
  int64_t rank = x.rank();
  int64_t start = ctx.attrs.getInt("start", 0);
  int64_t end = ctx.attrs.has("end") ? ctx.attrs.getInt("end") : rank;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(x.dim(i));
  ctx.outputs[0] =
      Tensor::fromVector<int64_t>(dims, {static_cast<int64_t>(dims.size())});
  return Status::ok();
}

Status sizeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "size", 1));
  ctx.outputs[0] = Tensor::scalar<int64_t>(ctx.input(0).numel());
  return Status::ok();
}

Status constantOfShapeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "constant_of_shape", 1));
  auto shape = readIntParam(ctx.input(0), "constant_of_shape", "shape");
  if (!shape)
    return shape.status();
  for (int64_t d : *shape)
    KILN_CHECK(d >= 0, "constant_of_shape: negative dimension ", d,
               " in shape ", intsToString(*shape));
  Tensor value = ctx.attrs.has("value") ? ctx.attrs.getTensor("value")
                                        : Tensor::scalar<float>(0.0f);
  KILN_CHECK(value.defined() && value.numel() == 1,
             "constant_of_shape: attribute 'value' must hold one element, got ",
             value.defined() ? value.typeString() : std::string("none"));
  Tensor out = Tensor::empty(value.dtype(), *shape);
  Tensor v = value.contiguous();
  size_t es = dtypeSize(value.dtype());
  char *o = static_cast<char *>(out.rawData());
  for (int64_t i = 0, n = out.numel(); i < n; ++i)
    std::memcpy(o + i * es, v.rawData(), es);
  ctx.outputs[0] = out;
  return Status::ok();
}

Status rangeKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "range", 3));
  DType dt = ctx.input(0).dtype();
  for (size_t i = 0; i < 3; ++i) {
    const Tensor &t = ctx.input(i);
    KILN_CHECK(t.dtype() == dt && t.numel() == 1, "range: operand ", i,
               " must be a one-element ", dtypeName(dt), " tensor, got ",
               t.typeString());
  }
  KILN_CHECK(dt != DType::Bool, "range: bool operands are not supported");
  Tensor out;
  Status st = visitDType(dt, [&](auto tag) -> Status {
    using T = decltype(tag);
    using C = typename ComputeType<T>::type;
    if constexpr (std::is_integral_v<C>) {
      int64_t start = ctx.input(0).getInt(0), limit = ctx.input(1).getInt(0),
              delta = ctx.input(2).getInt(0);
      KILN_CHECK(delta != 0, "range: delta is 0");
      int64_t span = limit - start;
      int64_t n = 0;
      if ((span > 0 && delta > 0) || (span < 0 && delta < 0)) {
        int64_t a = span > 0 ? span : -span, b = delta > 0 ? delta : -delta;
        n = (a + b - 1) / b;
      }
      out = Tensor::empty(dt, {n});
      T *p = out.data<T>();
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(start + i * delta);
    } else {
      double start = ctx.input(0).getDouble(0),
             limit = ctx.input(1).getDouble(0),
             delta = ctx.input(2).getDouble(0);
      KILN_CHECK(delta != 0 && std::isfinite(start) && std::isfinite(limit) &&
                     std::isfinite(delta),
                 "range: start, limit and delta must be finite and delta "
                 "non-zero, got ",
                 start, ", ", limit, ", ", delta);
      double count = std::ceil((limit - start) / delta);
      KILN_CHECK(count < 1e12, "range: ", count, " elements is too many");
      int64_t n = std::max<int64_t>(static_cast<int64_t>(count), 0);
      out = Tensor::empty(dt, {n});
      T *p = out.data<T>();
      // The ONNX loop accumulates in the element type: start + i * delta.
      C s = static_cast<C>(start), dl = static_cast<C>(delta);
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<T>(s + static_cast<C>(i) * dl);
    }
    return Status::ok();
  });
  KILN_RETURN_IF_ERROR(st);
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

void registerShapeKernels(Dispatcher &d) {
  d.add("reshape", Device::CPU, kAllTypes, reshapeKernel);
  d.add("flatten", Device::CPU, kAllTypes, flattenKernel);
  d.add("squeeze", Device::CPU, kAllTypes, squeezeKernel);
  d.add("unsqueeze", Device::CPU, kAllTypes, unsqueezeKernel);
  d.add("transpose", Device::CPU, kAllTypes, transposeKernel);
  d.add("concat", Device::CPU, kAllTypes, concatKernel);
  d.add("split", Device::CPU, kAllTypes, splitKernel);
  d.add("slice", Device::CPU, kAllTypes, sliceKernel);
  d.add("expand", Device::CPU, kAllTypes, expandKernel);
  d.add("shape", Device::CPU, kAllTypes, shapeKernel);
  d.add("size", Device::CPU, kAllTypes, sizeKernel);
  d.add("constant_of_shape", Device::CPU, kAllTypes, constantOfShapeKernel);
  d.add("range", Device::CPU, kNumericTypes, rangeKernel);
}

} // namespace datamovement
} // namespace kiln
