//===- Unique.cpp - The reference Unique kernel ---------------------------===//
//
// This file implements the CPU reference kernel of kiln.unique (ONNX
// Unique): the unique elements (axis -1, x flattened) or slices along an
// axis, sorted ascending (slices lexicographically, as NumPy's unique) or in
// order of first occurrence, with each one's first index, every element's
// or slice's position among them and their counts. Elements compare by
// value in a type that holds every value of the dtype exactly (f64 for the
// float dtypes, u64 for u64, i64 for the rest); NaNs compare equal to each
// other and above every number, so the sort's order is total.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace kiln {

namespace {

/// A total order on K: NaNs equal, after every number.
template <typename K> int compareKeys(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb)
      return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

/// The groups of equal slices of `keys` (n slices of `len` keys each): for
/// each slice its group, groups numbered in sorted order, and for each
/// group its first slice and count.
template <typename K>
void groupSlices(const K *keys, int64_t n, int64_t len,
                 std::vector<int64_t> &groupOf, std::vector<int64_t> &first,
                 std::vector<int64_t> &counts) {
  auto cmp = [&](int64_t a, int64_t b) {
    for (int64_t i = 0; i < len; ++i)
      if (int c = compareKeys(keys[a * len + i], keys[b * len + i]))
        return c;
    return 0;
  };
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  groupOf.assign(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || cmp(order[i - 1], order[i]) != 0) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    groupOf[order[i]] = static_cast<int64_t>(first.size()) - 1;
    ++counts.back();
  }
}

Status uniqueKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "unique: expected 1 operand, got ",
             ctx.numInputs());
  const Tensor &xIn = ctx.input(0);
  const int64_t axisAttr = ctx.attrs.getInt("axis", -1);
  const bool sorted = ctx.attrs.getInt("sorted", 1) != 0;
  KILN_CHECK(axisAttr >= -1 && axisAttr < xIn.rank(), "unique: axis ", axisAttr,
             " is out of range for ", xIn.typeString());
  // Move the axis to the front: slice i is row i of `xt` (n x len).
  Tensor xt;
  Shape sliceShape;
  if (axisAttr == -1) {
    xt = xIn.contiguous().reshape({xIn.numel()});
  } else {
    std::vector<int64_t> perm = {axisAttr};
    for (int64_t d = 0; d < xIn.rank(); ++d)
      if (d != axisAttr)
        perm.push_back(d);
    xt = xIn.permute(perm).contiguous();
    sliceShape.assign(xt.shape().begin() + 1, xt.shape().end());
  }
  const int64_t n = xt.rank() == 0 ? 1 : xt.dim(0);
  const int64_t len = n == 0 ? 0 : xt.numel() / n;
  std::vector<int64_t> groupOf, first, counts;
  const DType dt = xIn.dtype();
  if (isFloatingPoint(dt) || isFloat8(dt)) {
    Tensor k = xt.to(DType::F64);
    groupSlices(k.data<double>(), n, len, groupOf, first, counts);
  } else if (dt == DType::U64) {
    groupSlices(xt.data<uint64_t>(), n, len, groupOf, first, counts);
  } else {
    Tensor k = xt.to(DType::I64);
    groupSlices(k.data<int64_t>(), n, len, groupOf, first, counts);
  }
  const int64_t u = static_cast<int64_t>(first.size());
  // Unsorted: groups by first occurrence (rank[g] is g's output position).
  std::vector<int64_t> byOutput(u), rank(u);
  std::iota(byOutput.begin(), byOutput.end(), 0);
  if (!sorted)
    std::sort(byOutput.begin(), byOutput.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  for (int64_t i = 0; i < u; ++i)
    rank[byOutput[i]] = i;
  Shape yShape = {u};
  yShape.insert(yShape.end(), sliceShape.begin(), sliceShape.end());
  Tensor y = Tensor::empty(dt, yShape);
  Tensor indices = Tensor::empty(DType::I64, {u});
  Tensor inverse = Tensor::empty(DType::I64, {n});
  Tensor countT = Tensor::empty(DType::I64, {u});
  const size_t rowBytes = static_cast<size_t>(len) * dtypeSize(dt);
  const char *src = static_cast<const char *>(xt.rawData());
  char *dst = static_cast<char *>(y.rawData());
  for (int64_t i = 0; i < u; ++i) {
    int64_t g = byOutput[i];
    if (rowBytes)
      std::memcpy(dst + i * rowBytes, src + first[g] * rowBytes, rowBytes);
    indices.data<int64_t>()[i] = first[g];
    countT.data<int64_t>()[i] = counts[g];
  }
  for (int64_t i = 0; i < n; ++i)
    inverse.data<int64_t>()[i] = rank[groupOf[i]];
  if (axisAttr != -1) {
    // Back to x's dim order: the unique dim returns to `axis`.
    std::vector<int64_t> perm;
    for (int64_t d = 1; d <= axisAttr; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axisAttr + 1; d < xIn.rank(); ++d)
      perm.push_back(d);
    y = y.permute(perm).contiguous();
  }
  ctx.outputs.resize(4);
  ctx.outputs[0] = y;
  ctx.outputs[1] = indices;
  ctx.outputs[2] = inverse;
  ctx.outputs[3] = countT;
  return Status::ok();
}

} // namespace

/// Registers kiln.unique for every dtype.
void registerUniqueKernels(Dispatcher &d) {
  d.add("unique", Device::CPU, kAllTypes, uniqueKernel);
}

} // namespace kiln
