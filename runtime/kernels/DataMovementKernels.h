//===- DataMovementKernels.h - Shared helpers of data movement -*- C++ -*-===//
//
// This file declares the private registration entry points of the shape and
// data-movement kernel families (called from registerDataMovementKernels)
// and the small helpers they share: argument checks, parameter-operand
// reading, axis normalization, index loading and element-width dispatch.
// These kernels move bytes, so most of them are generic over the element
// size rather than the element type.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_DATAMOVEMENTKERNELS_H
#define KILN_RUNTIME_KERNELS_DATAMOVEMENTKERNELS_H

#include "kiln/runtime/Dispatcher.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kiln {
namespace datamovement {

/// Registers reshape, flatten, squeeze, unsqueeze, transpose, concat, split,
/// slice, expand, shape, size, constant_of_shape and range (ShapeOps.cpp).
void registerShapeKernels(Dispatcher &d);
/// Registers gather, gather_elements, gather_nd, scatter_elements,
/// scatter_nd and one_hot (GatherScatter.cpp).
void registerGatherScatterKernels(Dispatcher &d);
/// Registers pad, tile and trilu (PadTile.cpp).
void registerPadTileKernels(Dispatcher &d);

/// Checks that the kernel got exactly `numInputs` defined inputs and at least
/// `numOutputs` output slots.
Status checkArity(const KernelContext &ctx, const char *op, size_t numInputs,
                  size_t numOutputs = 1);

/// True for the integer dtypes (i64, i32, i8, u8).
bool isIntegerDType(DType t);

/// Reads a parameter operand (rank 0 or 1, integer dtype) as int64 values.
/// `what` names the operand in errors ("starts", "shape", ...).
Expected<std::vector<int64_t>> readIntParam(const Tensor &t, const char *op,
                                            const char *what);

/// Normalizes `axis` (negative counts from the end) against `rank`; errors
/// when it is outside [-rank, rank).
Status normalizeAxisChecked(int64_t &axis, int64_t rank, const char *op,
                            const char *what = "axis");

/// Returns an integer index tensor as a contiguous i64 tensor; errors when
/// the dtype is not an integer type.
Expected<Tensor> indicesAsI64(const Tensor &t, const char *op,
                              const char *what = "indices");

/// Wraps a possibly negative index into [0, dim); errors (naming the op,
/// the index and the dim) when it is outside [-dim, dim).
inline Status wrapIndex(int64_t &idx, int64_t dim, const char *op,
                        int64_t axis) {
  int64_t orig = idx;
  if (idx < 0)
    idx += dim;
  if (idx < 0 || idx >= dim)
    return Status::error(strCat(op, ": index ", orig, " is out of range [",
                                -dim, ", ", dim, ") for axis ", axis,
                                " of size ", dim));
  return Status::ok();
}

/// A strided view of `base`'s storage (offset relative to the storage).
inline Tensor makeView(const Tensor &base, Shape shape, Shape strides,
                       int64_t offset) {
  return Tensor(base.storage(), base.dtype(), std::move(shape),
                std::move(strides), offset);
}

/// Calls fn(W{}) with an unsigned integer type W as wide as one element of
/// `elemSize` bytes (1, 2, 4 or 8), so byte-moving loops are type-free.
template <typename Fn> decltype(auto) visitWidth(size_t elemSize, Fn &&fn) {
  switch (elemSize) {
  case 1:
    return fn(uint8_t{});
  case 2:
    return fn(uint16_t{});
  case 4:
    return fn(uint32_t{});
  default:
    return fn(uint64_t{});
  }
}

/// "[1, -1, 0]": a list of integers as written (unlike shapeToString, which
/// prints negative dims as "?").
inline std::string intsToString(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Calls fn(flat, idx) for every multi-index `idx` of `shape` in C order;
/// stops at, and returns, the first error fn returns.
template <typename Fn> Status forEachMultiIndex(const Shape &shape, Fn &&fn) {
  int64_t n = numElements(shape);
  if (n <= 0)
    return Status::ok();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    KILN_RETURN_IF_ERROR(fn(flat, idx));
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return Status::ok();
}

} // namespace datamovement
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_DATAMOVEMENTKERNELS_H
