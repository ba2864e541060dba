//===- KernelUtils.h - Shared helpers of the reference kernels -*- C++ -*-===//
//
// This file declares small header-only helpers the kernel families share:
// axis normalization, NumPy broadcasting of shapes, broadcast strides (a
// tensor viewed as a larger output shape, with stride 0 on broadcast dims),
// a multi-index iterator over a shape, a strided element reader, and the
// adapter that runs a channels-first kernel on channels-last operands.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_KERNELUTILS_H
#define KILN_RUNTIME_KERNELS_KERNELUTILS_H

#include "kiln/runtime/Dispatcher.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln {

/// Maps `axis` in [-rank, rank) to [0, rank); an error when out of range.
inline Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return Status::error(strCat("axis ", axis, " is out of range for rank ",
                                rank, " (expected [", -rank, ", ", rank, "))"));
  return axis < 0 ? axis + rank : axis;
}

/// The NumPy broadcast of two shapes; the error names both shapes.
inline Expected<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return Status::error(strCat("shapes ", shapeToString(a), " and ",
                                  shapeToString(b),
                                  " cannot be broadcast (dimension ", i,
                                  " of the result: ", da, " vs ", db, ")"));
  }
  return out;
}

/// Strides (in elements) to read `t` as if it had shape `outShape`: the
/// tensor's own strides aligned to the right, 0 for broadcast and missing
/// dims. `t`'s shape must broadcast to `outShape`.
inline Shape broadcastStrides(const Tensor &t, const Shape &outShape) {
  size_t rank = outShape.size();
  size_t lead = rank - t.shape().size();
  Shape strides(rank, 0);
  for (size_t i = lead; i < rank; ++i) {
    int64_t d = t.shape()[i - lead];
    strides[i] = (d == 1 && outShape[i] != 1) ? 0 : t.strides()[i - lead];
  }
  return strides;
}

/// Calls fn(index) for every multi-index of `shape` in C order (once for
/// rank 0, never when some dim is 0). `index` is a const std::vector<int64_t>&.
template <typename Fn> void forEachIndex(const Shape &shape, Fn &&fn) {
  for (int64_t d : shape)
    if (d <= 0)
      return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    fn(static_cast<const std::vector<int64_t> &>(idx));
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Walks `numOperands` strided operands together over `shape` in C order,
/// calling fn(offsets) where offsets[k] is the element offset of operand k
/// (its starting offset plus index·strides). Cheaper than forEachIndex plus
/// a dot product per element.
template <size_t N, typename Fn>
void forEachOffset(const Shape &shape, const Shape (&strides)[N],
                   const int64_t (&start)[N], Fn &&fn) {
  for (int64_t d : shape)
    if (d <= 0)
      return;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t off[N];
  for (size_t k = 0; k < N; ++k)
    off[k] = start[k];
  if (rank == 0) {
    fn(static_cast<const int64_t(&)[N]>(off));
    return;
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t inner = shape[rank - 1];
  while (true) {
    int64_t row[N];
    for (size_t k = 0; k < N; ++k)
      row[k] = off[k];
    for (int64_t j = 0; j < inner; ++j) {
      fn(static_cast<const int64_t(&)[N]>(off));
      for (size_t k = 0; k < N; ++k)
        off[k] += strides[k][rank - 1];
    }
    for (size_t k = 0; k < N; ++k)
      off[k] = row[k];
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k)
          off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k)
        off[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Element offset of multi-index `idx` under `strides` (plus `offset`).
inline int64_t offsetOf(const std::vector<int64_t> &idx, const Shape &strides,
                        int64_t offset = 0) {
  for (size_t i = 0; i < idx.size(); ++i)
    offset += idx[i] * strides[i];
  return offset;
}

/// Typed pointer to element 0 of the storage of `t` (offset NOT applied);
/// pair with offsets from broadcastStrides/forEachOffset that start at
/// t.offset().
template <typename T> T *storageBase(const Tensor &t) {
  return static_cast<T *>(t.storage()->data());
}

namespace kernels {

/// Runs the channels-first (NCHW) kernel `fn` for an op with `layout =
/// "nhwc"` (kiln.conv, kiln.max_pool after the CUDA target's
/// kiln-channels-last pass): the first `permuted` inputs are moved from
/// channels last to channels first, and every output back. Without the
/// attribute, `fn` runs on the context as it is; another layout is an error.
template <typename Fn>
Status runChannelsFirst(const char *op, KernelContext &ctx, size_t permuted,
                        Fn &&fn) {
  if (!ctx.attrs.has("layout"))
    return fn(ctx);
  std::string layout = ctx.attrs.getString("layout");
  KILN_CHECK(layout == "nhwc", op, ": unknown layout '", layout,
             "' (expected nhwc, or no layout for channels first)");
  std::vector<Tensor> inputs = ctx.inputs;
  for (size_t i = 0; i < permuted && i < inputs.size(); ++i) {
    int64_t rank = inputs[i].rank();
    KILN_CHECK(rank >= 3, op, ": a channels-last operand needs rank >= 3, got ",
               inputs[i].typeString());
    std::vector<int64_t> perm = {0, rank - 1};
    for (int64_t d = 1; d + 1 < rank; ++d)
      perm.push_back(d);
    inputs[i] = inputs[i].permute(perm).contiguous();
  }
  KernelContext first{inputs, ctx.attrs, ctx.outputs};
  KILN_RETURN_IF_ERROR(fn(first));
  for (Tensor &out : ctx.outputs) {
    int64_t rank = out.rank();
    std::vector<int64_t> perm = {0};
    for (int64_t d = 2; d < rank; ++d)
      perm.push_back(d);
    perm.push_back(1);
    out = out.permute(perm).contiguous();
  }
  return Status::ok();
}

} // namespace kernels
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_KERNELUTILS_H
