//===- GatherScatter.cpp - Index-driven gather and scatter kernels --------===//
//
// This file implements the reference CPU kernels of the kiln ops that read
// or write a tensor at positions given by an index tensor: gather,
// gather_elements, gather_nd, scatter_elements, scatter_nd (with the
// reductions none, add, mul, max and min) and one_hot. Indices may be i32 or
// i64 and negative (counting from the end); an index outside the valid range
// is an error that names the op and the index.
//
//===----------------------------------------------------------------------===//

#include "DataMovementKernels.h"

#include <algorithm>

namespace kiln {
namespace datamovement {
namespace {

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    p *= shape[i];
  return p;
}

//===----------------------------------------------------------------------===//
// gather, gather_elements, gather_nd
//===----------------------------------------------------------------------===//

Status gatherKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "gather", 2));
  Tensor x = ctx.input(0).contiguous();
  auto indOr = indicesAsI64(ctx.input(1), "gather");
  if (!indOr)
    return indOr.status();
  Tensor ind = indOr.take();
  KILN_CHECK(x.rank() >= 1, "gather: data must have rank >= 1, got ",
             x.typeString());
  int64_t axis = ctx.attrs.getInt("axis", 0);
  KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, x.rank(), "gather"));
  Shape shape(x.shape().begin(), x.shape().begin() + axis);
  shape.insert(shape.end(), ind.shape().begin(), ind.shape().end());
  shape.insert(shape.end(), x.shape().begin() + axis + 1, x.shape().end());
  int64_t outer = product(x.shape(), 0, axis), dim = x.dim(axis);
  int64_t inner = product(x.shape(), axis + 1, x.rank());
  int64_t count = ind.numel();
  const int64_t *idx = ind.data<int64_t>();
  std::vector<int64_t> wrapped(idx, idx + count);
  for (int64_t &i : wrapped)
    KILN_RETURN_IF_ERROR(wrapIndex(i, dim, "gather", axis));
  Tensor out = Tensor::empty(x.dtype(), shape);
  size_t block = static_cast<size_t>(inner) * dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(out.rawData());
  if (block != 0)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < count; ++j)
        std::memcpy(dst + (o * count + j) * block,
                    src + (o * dim + wrapped[j]) * block, block);
  ctx.outputs[0] = out;
  return Status::ok();
}

/// Checks the operands of gather_elements / scatter_elements: same rank, and
/// indices no larger than the data outside `axis`.
Status checkElementsShapes(const Tensor &x, const Tensor &ind, int64_t axis,
                           const char *op) {
  KILN_CHECK(ind.rank() == x.rank(), op, ": indices ", ind.typeString(),
             " must have the rank of data ", x.typeString());
  for (int64_t d = 0; d < x.rank(); ++d)
    KILN_CHECK(d == axis || ind.dim(d) <= x.dim(d), op, ": indices ",
               ind.typeString(), " do not fit data ", x.typeString(),
               " along axis ", d);
  return Status::ok();
}

Status gatherElementsKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "gather_elements", 2));
  Tensor x = ctx.input(0).contiguous();
  auto indOr = indicesAsI64(ctx.input(1), "gather_elements");
  if (!indOr)
    return indOr.status();
  Tensor ind = indOr.take();
  KILN_CHECK(x.rank() >= 1, "gather_elements: data must have rank >= 1, got ",
             x.typeString());
  int64_t axis = ctx.attrs.getInt("axis", 0);
  KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, x.rank(), "gather_elements"));
  KILN_RETURN_IF_ERROR(checkElementsShapes(x, ind, axis, "gather_elements"));
  Tensor out = Tensor::empty(x.dtype(), ind.shape());
  Shape strides = contiguousStrides(x.shape());
  const int64_t *idx = ind.data<int64_t>();
  size_t es = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(out.rawData());
  KILN_RETURN_IF_ERROR(forEachMultiIndex(
      ind.shape(), [&](int64_t flat, const std::vector<int64_t> &pos) {
        int64_t i = idx[flat];
        KILN_RETURN_IF_ERROR(
            wrapIndex(i, x.dim(axis), "gather_elements", axis));
        int64_t off = 0;
        for (int64_t d = 0; d < x.rank(); ++d)
          off += (d == axis ? i : pos[d]) * strides[d];
        std::memcpy(dst + flat * es, src + off * es, es);
        return Status::ok();
      }));
  ctx.outputs[0] = out;
  return Status::ok();
}

/// Validates gather_nd / scatter_nd index tuples: returns, for each of the
/// `numTuples` tuples of `m` indices at `tuples`, the element offset it
/// selects in a tensor of `dims` (dims[0..m)) with strides `strides`.
/// `axisBase` is the data axis of dims[0] (for error messages).
Status tupleOffsets(const int64_t *tuples, int64_t numTuples, int64_t m,
                    const Shape &dims, const Shape &strides, const char *op,
                    int64_t axisBase, std::vector<int64_t> &offsets) {
  offsets.resize(numTuples);
  for (int64_t t = 0; t < numTuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < m; ++j) {
      int64_t i = tuples[t * m + j];
      KILN_RETURN_IF_ERROR(wrapIndex(i, dims[j], op, axisBase + j));
      off += i * strides[j];
    }
    offsets[t] = off;
  }
  return Status::ok();
}

Status gatherNdKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "gather_nd", 2));
  Tensor x = ctx.input(0).contiguous();
  auto indOr = indicesAsI64(ctx.input(1), "gather_nd");
  if (!indOr)
    return indOr.status();
  Tensor ind = indOr.take();
  int64_t b = ctx.attrs.getInt("batch_dims", 0);
  int64_t r = x.rank(), q = ind.rank();
  KILN_CHECK(r >= 1 && q >= 1, "gather_nd: data ", x.typeString(),
             " and indices ", ind.typeString(), " must have rank >= 1");
  KILN_CHECK(b >= 0 && b < std::min(r, q), "gather_nd: batch_dims ", b,
             " must be in [0, ", std::min(r, q), ")");
  for (int64_t d = 0; d < b; ++d)
    KILN_CHECK(x.dim(d) == ind.dim(d), "gather_nd: batch dim ", d,
               " differs between data ", x.typeString(), " and indices ",
               ind.typeString());
  int64_t m = ind.dim(q - 1);
  KILN_CHECK(m >= 0 && m <= r - b, "gather_nd: index tuples of length ", m,
             " do not fit data ", x.typeString(), " with batch_dims ", b);
  Shape shape(ind.shape().begin(), ind.shape().end() - 1);
  shape.insert(shape.end(), x.shape().begin() + b + m, x.shape().end());
  int64_t batches = product(x.shape(), 0, b);
  int64_t tuplesPerBatch = product(ind.shape(), b, q - 1);
  int64_t sliceElems = product(x.shape(), b + m, r);
  int64_t batchElems = product(x.shape(), b, r);
  Shape dims(x.shape().begin() + b, x.shape().begin() + b + m);
  Shape allStrides = contiguousStrides(x.shape());
  Shape strides(allStrides.begin() + b, allStrides.begin() + b + m);
  std::vector<int64_t> offsets;
  KILN_RETURN_IF_ERROR(tupleOffsets(ind.data<int64_t>(),
                                    batches * tuplesPerBatch, m, dims, strides,
                                    "gather_nd", b, offsets));
  Tensor out = Tensor::empty(x.dtype(), shape);
  size_t es = dtypeSize(x.dtype());
  size_t block = static_cast<size_t>(sliceElems) * es;
  const char *src = static_cast<const char *>(x.rawData());
  char *dst = static_cast<char *>(out.rawData());
  if (block != 0)
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t t = 0; t < tuplesPerBatch; ++t) {
        int64_t k = bi * tuplesPerBatch + t;
        std::memcpy(dst + k * block, src + (bi * batchElems + offsets[k]) * es,
                    block);
      }
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// scatter_elements, scatter_nd
//===----------------------------------------------------------------------===//

enum class Reduction { None, Add, Mul, Max, Min };

Status parseReduction(const Attributes &attrs, const char *op, Reduction &red) {
  std::string s = attrs.getString("reduction", "none");
  if (s == "none" || s.empty())
    red = Reduction::None;
  else if (s == "add")
    red = Reduction::Add;
  else if (s == "mul")
    red = Reduction::Mul;
  else if (s == "max")
    red = Reduction::Max;
  else if (s == "min")
    red = Reduction::Min;
  else
    return Status::error(strCat(op, ": unknown reduction '", s,
                                "' (expected none, add, mul, max or min)"));
  return Status::ok();
}

/// Combines `src` into `dst` with the reduction (element type T).
template <typename T> void combine(T &dst, const T &src, Reduction red) {
  using C = typename ComputeType<T>::type;
  C a = static_cast<C>(dst), b = static_cast<C>(src);
  switch (red) {
  case Reduction::None:
    dst = src;
    return;
  case Reduction::Add:
    dst = static_cast<T>(static_cast<C>(a + b));
    return;
  case Reduction::Mul:
    dst = static_cast<T>(static_cast<C>(a * b));
    return;
  case Reduction::Max:
    dst = static_cast<T>(a < b ? b : a);
    return;
  case Reduction::Min:
    dst = static_cast<T>(b < a ? b : a);
    return;
  }
}

/// Combines `n` consecutive elements of `src` into `dst`.
void combineRun(DType dt, char *dst, const char *src, int64_t n,
                Reduction red) {
  if (red == Reduction::None) {
    std::memcpy(dst, src, static_cast<size_t>(n) * dtypeSize(dt));
    return;
  }
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    T *d = reinterpret_cast<T *>(dst);
    const T *s = reinterpret_cast<const T *>(src);
    for (int64_t i = 0; i < n; ++i)
      combine(d[i], s[i], red);
  });
}

Status scatterElementsKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "scatter_elements", 3));
  const Tensor &x = ctx.input(0);
  auto indOr = indicesAsI64(ctx.input(1), "scatter_elements");
  if (!indOr)
    return indOr.status();
  Tensor ind = indOr.take();
  Tensor upd = ctx.input(2).contiguous();
  KILN_CHECK(x.rank() >= 1, "scatter_elements: data must have rank >= 1, got ",
             x.typeString());
  KILN_CHECK(upd.dtype() == x.dtype() && upd.shape() == ind.shape(),
             "scatter_elements: updates ", upd.typeString(),
             " must have the dtype of data ", x.typeString(),
             " and the shape of indices ", ind.typeString());
  int64_t axis = ctx.attrs.getInt("axis", 0);
  KILN_RETURN_IF_ERROR(
      normalizeAxisChecked(axis, x.rank(), "scatter_elements"));
  KILN_RETURN_IF_ERROR(checkElementsShapes(x, ind, axis, "scatter_elements"));
  Reduction red;
  KILN_RETURN_IF_ERROR(parseReduction(ctx.attrs, "scatter_elements", red));
  // Validate every index before writing anything.
  const int64_t *idx = ind.data<int64_t>();
  std::vector<int64_t> offsets(ind.numel());
  Shape strides = contiguousStrides(x.shape());
  KILN_RETURN_IF_ERROR(forEachMultiIndex(
      ind.shape(), [&](int64_t flat, const std::vector<int64_t> &pos) {
        int64_t i = idx[flat];
        KILN_RETURN_IF_ERROR(
            wrapIndex(i, x.dim(axis), "scatter_elements", axis));
        int64_t off = 0;
        for (int64_t d = 0; d < x.rank(); ++d)
          off += (d == axis ? i : pos[d]) * strides[d];
        offsets[flat] = off;
        return Status::ok();
      }));
  Tensor out = x.clone();
  size_t es = dtypeSize(x.dtype());
  char *dst = static_cast<char *>(out.rawData());
  const char *src = static_cast<const char *>(upd.rawData());
  for (size_t k = 0; k < offsets.size(); ++k)
    combineRun(x.dtype(), dst + offsets[k] * es, src + k * es, 1, red);
  ctx.outputs[0] = out;
  return Status::ok();
}

Status scatterNdKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "scatter_nd", 3));
  const Tensor &x = ctx.input(0);
  auto indOr = indicesAsI64(ctx.input(1), "scatter_nd");
  if (!indOr)
    return indOr.status();
  Tensor ind = indOr.take();
  Tensor upd = ctx.input(2).contiguous();
  int64_t r = x.rank(), q = ind.rank();
  KILN_CHECK(r >= 1 && q >= 1, "scatter_nd: data ", x.typeString(),
             " and indices ", ind.typeString(), " must have rank >= 1");
  int64_t k = ind.dim(q - 1);
  KILN_CHECK(k >= 0 && k <= r, "scatter_nd: index tuples of length ", k,
             " do not fit data ", x.typeString());
  Shape expected(ind.shape().begin(), ind.shape().end() - 1);
  expected.insert(expected.end(), x.shape().begin() + k, x.shape().end());
  KILN_CHECK(upd.dtype() == x.dtype() && upd.shape() == expected,
             "scatter_nd: updates ", upd.typeString(), " must be ",
             dtypeName(x.dtype()), shapeToString(expected), " for data ",
             x.typeString(), " and indices ", ind.typeString());
  Reduction red;
  KILN_RETURN_IF_ERROR(parseReduction(ctx.attrs, "scatter_nd", red));
  int64_t numTuples = product(ind.shape(), 0, q - 1);
  int64_t sliceElems = product(x.shape(), k, r);
  Shape strides = contiguousStrides(x.shape());
  std::vector<int64_t> offsets;
  KILN_RETURN_IF_ERROR(tupleOffsets(ind.data<int64_t>(), numTuples, k,
                                    x.shape(), strides, "scatter_nd", 0,
                                    offsets));
  Tensor out = x.clone();
  size_t es = dtypeSize(x.dtype());
  char *dst = static_cast<char *>(out.rawData());
  const char *src = static_cast<const char *>(upd.rawData());
  for (int64_t t = 0; t < numTuples; ++t)
    combineRun(x.dtype(), dst + offsets[t] * es, src + t * sliceElems * es,
               sliceElems, red);
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// one_hot
//===----------------------------------------------------------------------===//

Status oneHotKernel(KernelContext &ctx) {
  KILN_RETURN_IF_ERROR(checkArity(ctx, "one_hot", 3));
  const Tensor &indices = ctx.input(0);
  const Tensor &depthT = ctx.input(1);
  Tensor values = ctx.input(2).contiguous();
  KILN_CHECK(indices.dtype() != DType::Bool,
             "one_hot: indices must be numeric, got ", indices.typeString());
  KILN_CHECK(depthT.numel() == 1 && depthT.dtype() != DType::Bool,
             "one_hot: depth must be one numeric element, got ",
             depthT.typeString());
  KILN_CHECK(values.numel() == 2,
             "one_hot: values must hold two elements "
             "[off, on], got ",
             values.typeString());
  int64_t depth = depthT.getInt(0);
  KILN_CHECK(depth >= 0, "one_hot: depth ", depth, " is negative");
  Tensor ind = indices.to(DType::I64);
  int64_t r = ind.rank();
  int64_t axis = ctx.attrs.getInt("axis", -1);
  KILN_RETURN_IF_ERROR(normalizeAxisChecked(axis, r + 1, "one_hot"));
  Shape shape(ind.shape().begin(), ind.shape().begin() + axis);
  shape.push_back(depth);
  shape.insert(shape.end(), ind.shape().begin() + axis, ind.shape().end());
  Tensor out = Tensor::empty(values.dtype(), shape);
  size_t es = dtypeSize(values.dtype());
  const char *off = static_cast<const char *>(values.rawData());
  const char *on = off + es;
  char *dst = static_cast<char *>(out.rawData());
  for (int64_t i = 0, n = out.numel(); i < n; ++i)
    std::memcpy(dst + i * es, off, es);
  int64_t outer = product(ind.shape(), 0, axis);
  int64_t inner = product(ind.shape(), axis, r);
  const int64_t *idx = ind.data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t v = idx[o * inner + j];
      if (v < 0)
        v += depth;
      if (v < 0 || v >= depth)
        continue; // Out-of-range indices give an all-off row (ONNX OneHot).
      std::memcpy(dst + ((o * depth + v) * inner + j) * es, on, es);
    }
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

void registerGatherScatterKernels(Dispatcher &d) {
  d.add("gather", Device::CPU, kAllTypes, gatherKernel);
  d.add("gather_elements", Device::CPU, kAllTypes, gatherElementsKernel);
  d.add("gather_nd", Device::CPU, kAllTypes, gatherNdKernel);
  d.add("scatter_elements", Device::CPU, kAllTypes, scatterElementsKernel);
  d.add("scatter_nd", Device::CPU, kAllTypes, scatterNdKernel);
  d.add("one_hot", Device::CPU, kNumericTypes, oneHotKernel);
}

} // namespace datamovement
} // namespace kiln
