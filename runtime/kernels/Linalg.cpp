//===- Linalg.cpp - Reference matmul and einsum kernels -------------------===//
//
// This file implements the CPU reference kernels of kiln.matmul (NumPy
// matmul: 1-D promotion, batch broadcasting; f32/f64 through BLAS, f16/bf16
// through f32 BLAS, integers with a plain loop that wraps in the element
// type) and kiln.einsum (ONNX Einsum: explicit and implicit output, `...`,
// repeated indices, sums; two-operand contractions that are a batched matmul
// go through BLAS, everything else through a loop over the joint index
// space). It also defines the shared GEMM helpers and registers the
// convolution and pooling families.
//
//===----------------------------------------------------------------------===//

#include "EinsumPlan.h"
#include "KernelUtils.h"
#include "LinalgKernels.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

namespace kiln {
namespace linalg {

template <typename T, typename GemmFn>
static void gemmImpl(GemmFn fn, bool transA, bool transB, int64_t m, int64_t n,
                     int64_t k, const T *a, int64_t lda, const T *b,
                     int64_t ldb, T beta, T *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  // One BLAS call at a time in the process, on OpenBLAS's own pool of
  // threads: its results depend on its thread count (on AVX-512 hosts its
  // single-threaded sgemm rounds differently), so concurrent runs do not
  // change that count (CpuThreads.cpp), and they queue here instead of
  // oversubscribing the cores with one pool per caller.
  static std::mutex blasCall;
  std::lock_guard<std::mutex> lock(blasCall);
  fn(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
     transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
     static_cast<blasint>(n), static_cast<blasint>(k), T(1), a,
     static_cast<blasint>(std::max<int64_t>(lda, 1)), b,
     static_cast<blasint>(std::max<int64_t>(ldb, 1)), beta, c,
     static_cast<blasint>(std::max<int64_t>(ldc, 1)));
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
          float *c, int64_t ldc) {
  gemmImpl<float>(cblas_sgemm, transA, transB, m, n, k, a, lda, b, ldb, beta, c,
                  ldc);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const double *a, int64_t lda, const double *b, int64_t ldb,
          double beta, double *c, int64_t ldc) {
  gemmImpl<double>(cblas_dgemm, transA, transB, m, n, k, a, lda, b, ldb, beta,
                   c, ldc);
}

} // namespace linalg

namespace {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// The shapes of one matmul: batch shape, M, N, K, and the result shape.
struct MatmulPlan {
  Shape batch;
  Shape aBatchStrides, bBatchStrides; // Per batch dim, in whole matrices.
  int64_t m = 0, n = 0, k = 0;
  Shape outShape;
};

Expected<MatmulPlan> planMatmul(const Shape &aShape, const Shape &bShape) {
  if (aShape.empty() || bShape.empty())
    return Status::error(strCat("matmul: operands must have rank >= 1, got ",
                                shapeToString(aShape), " and ",
                                shapeToString(bShape)));
  Shape as = aShape, bs = bShape;
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  MatmulPlan p;
  p.m = as[as.size() - 2];
  p.k = as[as.size() - 1];
  p.n = bs[bs.size() - 1];
  if (bs[bs.size() - 2] != p.k)
    return Status::error(strCat(
        "matmul: inner dimensions differ: ", shapeToString(aShape), " x ",
        shapeToString(bShape), " (", p.k, " vs ", bs[bs.size() - 2], ")"));
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  auto batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return batch.status().withContext("matmul: batch dimensions");
  p.batch = *batch;
  size_t rank = p.batch.size();
  // Strides (in matrices) of each operand's batch dims, 0 where broadcast.
  auto batchStrides = [&](const Shape &own) {
    Shape strides(rank, 0);
    int64_t s = 1;
    for (size_t i = 0; i < own.size(); ++i) {
      size_t j = own.size() - 1 - i, o = rank - 1 - i;
      strides[o] = (own[j] == 1 && p.batch[o] != 1) ? 0 : s;
      s *= own[j];
    }
    return strides;
  };
  p.aBatchStrides = batchStrides(aBatch);
  p.bBatchStrides = batchStrides(bBatch);
  p.outShape = p.batch;
  if (!aVec)
    p.outShape.push_back(p.m);
  if (!bVec)
    p.outShape.push_back(p.n);
  return p;
}

/// Matrix offsets (in matrices) of A and B for every batch element.
void batchOffsets(const MatmulPlan &p, std::vector<int64_t> &aOff,
                  std::vector<int64_t> &bOff) {
  Shape strides[2] = {p.aBatchStrides, p.bBatchStrides};
  int64_t start[2] = {0, 0};
  forEachOffset<2>(p.batch, strides, start, [&](const int64_t(&off)[2]) {
    aOff.push_back(off[0]);
    bOff.push_back(off[1]);
  });
}

template <typename T>
void matmulBlas(const MatmulPlan &p, const T *a, const T *b, T *c) {
  int64_t batchCount = numElements(p.batch);
  // One GEMM when B is shared by every batch and A is not broadcast.
  bool bShared = std::all_of(p.bBatchStrides.begin(), p.bBatchStrides.end(),
                             [](int64_t s) { return s == 0; });
  if (bShared && numElements(p.batch) > 0) {
    std::vector<int64_t> aOff, bOff;
    batchOffsets(p, aOff, bOff);
    bool aDense = true;
    for (int64_t i = 0; i < batchCount && aDense; ++i)
      aDense = aOff[i] == i;
    if (aDense) {
      linalg::gemm(false, false, batchCount * p.m, p.n, p.k, a, p.k, b, p.n,
                   T(0), c, p.n);
      return;
    }
  }
  std::vector<int64_t> aOff, bOff;
  batchOffsets(p, aOff, bOff);
  for (size_t i = 0; i < aOff.size(); ++i)
    linalg::gemm(false, false, p.m, p.n, p.k, a + aOff[i] * p.m * p.k, p.k,
                 b + bOff[i] * p.k * p.n, p.n, T(0), c + i * p.m * p.n, p.n);
}

/// Integer matmul; accumulates modulo 2^64 and stores modulo the element
/// width, which equals accumulating in the element type with wraparound.
template <typename T>
void matmulLoop(const MatmulPlan &p, const T *a, const T *b, T *c) {
  std::vector<int64_t> aOff, bOff;
  batchOffsets(p, aOff, bOff);
  std::vector<uint64_t> acc(p.n);
  for (size_t bi = 0; bi < aOff.size(); ++bi) {
    const T *A = a + aOff[bi] * p.m * p.k;
    const T *B = b + bOff[bi] * p.k * p.n;
    T *C = c + bi * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        uint64_t av =
            static_cast<uint64_t>(static_cast<int64_t>(A[i * p.k + kk]));
        const T *brow = B + kk * p.n;
        for (int64_t j = 0; j < p.n; ++j)
          acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j]));
      }
      for (int64_t j = 0; j < p.n; ++j)
        C[i * p.n + j] = static_cast<T>(acc[j]);
    }
  }
}

Status matmulKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 2, "matmul: expected 2 operands, got ",
             ctx.numInputs());
  const Tensor &a0 = ctx.input(0), &b0 = ctx.input(1);
  KILN_CHECK(a0.dtype() == b0.dtype(), "matmul: operand dtypes differ (",
             a0.typeString(), " and ", b0.typeString(), ")");
  auto plan = planMatmul(a0.shape(), b0.shape());
  if (!plan)
    return plan.status();
  const MatmulPlan &p = *plan;
  DType dt = a0.dtype();
  if (dt == DType::F16 || dt == DType::BF16) {
    Tensor a = a0.to(DType::F32), b = b0.to(DType::F32);
    Tensor out = Tensor::empty(DType::F32, p.outShape);
    matmulBlas<float>(p, a.data<float>(), b.data<float>(), out.data<float>());
    ctx.outputs[0] = out.to(dt);
    return Status::ok();
  }
  Tensor a = a0.contiguous(), b = b0.contiguous();
  Tensor out = Tensor::empty(dt, p.outShape);
  Status st = Status::ok();
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      matmulBlas<T>(p, a.data<T>(), b.data<T>(), out.data<T>());
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      matmulLoop<T>(p, a.data<T>(), b.data<T>(), out.data<T>());
    else
      st = Status::error(strCat("matmul: unsupported dtype ", dtypeName(dt)));
  });
  KILN_RETURN_IF_ERROR(st);
  ctx.outputs[0] = out;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

template <typename T>
using EinsumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T> EinsumAcc<T> toAcc(T v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return static_cast<double>(static_cast<float>(v));
}

/// The general einsum: walks the joint index space (output labels outer,
/// summed labels inner) and sums the products of the operands.
template <typename T>
void einsumLoop(const einsum::EinsumPlan &p, const std::vector<Tensor> &inputs,
                Tensor &out) {
  std::vector<Shape> shapes;
  for (const Tensor &t : inputs)
    shapes.push_back(t.shape());
  einsum::EinsumLoops loops = einsum::planLoops(p, shapes);
  const Shape &sizes = loops.sizes;
  const std::vector<Shape> &strides = loops.strides;
  size_t nOut = loops.numOutput, nAll = sizes.size(), nIn = inputs.size();
  std::vector<const T *> data(nIn);
  for (size_t i = 0; i < nIn; ++i)
    data[i] = inputs[i].data<T>();
  int64_t outCount = 1, sumCount = 1;
  for (size_t d = 0; d < nAll; ++d)
    (d < nOut ? outCount : sumCount) *= sizes[d];
  T *o = out.data<T>();
  if (outCount == 0 || sumCount == 0)
    return; // Output is empty or all zeros (already zero-filled).
  std::vector<int64_t> idx(nAll, 0), off(nIn, 0);
  for (int64_t oi = 0; oi < outCount; ++oi) {
    EinsumAcc<T> acc = 0;
    for (int64_t si = 0; si < sumCount; ++si) {
      EinsumAcc<T> prod = 1;
      for (size_t i = 0; i < nIn; ++i)
        prod *= toAcc<T>(data[i][off[i]]);
      acc += prod;
      // Advance the joint index (C order over `order`).
      for (int64_t d = static_cast<int64_t>(nAll) - 1; d >= 0; --d) {
        if (++idx[d] < sizes[d]) {
          for (size_t i = 0; i < nIn; ++i)
            off[i] += strides[i][d];
          break;
        }
        for (size_t i = 0; i < nIn; ++i)
          off[i] -= strides[i][d] * (sizes[d] - 1);
        idx[d] = 0;
      }
    }
    if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>)
      o[oi] = static_cast<T>(acc);
    else
      o[oi] = static_cast<T>(static_cast<float>(acc));
  }
}

/// Two operands whose labels are each batch (both inputs and output), M
/// (first input and output), N (second input and output) or K (both
/// inputs, summed), with no repeated label and no broadcasting: computes it
/// as a batched GEMM. Returns false when the contraction is not of that form.
template <typename T>
bool einsumAsMatmul(const einsum::EinsumPlan &p, const std::vector<Tensor> &inputs,
                    Tensor &out) {
  if (inputs.size() != 2)
    return false;
  const auto &la = p.inputLabels[0], &lb = p.inputLabels[1];
  auto has = [](const std::vector<int> &v, int l) {
    return std::count(v.begin(), v.end(), l);
  };
  std::vector<int> batch, mL, nL, kL;
  for (auto &[l, s] : p.sizes) {
    auto ca = has(la, l), cb = has(lb, l), co = has(p.outLabels, l);
    if (ca > 1 || cb > 1)
      return false;
    if (ca && cb)
      (co ? batch : kL).push_back(l);
    else if (ca && co)
      mL.push_back(l);
    else if (cb && co)
      nL.push_back(l);
    else
      return false; // Summed over one operand only.
  }
  for (size_t i = 0; i < 2; ++i)
    for (size_t d = 0; d < p.inputLabels[i].size(); ++d)
      if (inputs[i].dim(d) != p.sizes.at(p.inputLabels[i][d]))
        return false; // Broadcasting.
  auto perm = [](const std::vector<int> &labels,
                 std::initializer_list<const std::vector<int> *> groups) {
    std::vector<int64_t> result;
    for (const auto *g : groups)
      for (int l : *g)
        result.push_back(std::find(labels.begin(), labels.end(), l) -
                         labels.begin());
    return result;
  };
  auto prod = [&](const std::vector<int> &ls) {
    int64_t r = 1;
    for (int l : ls)
      r *= p.sizes.at(l);
    return r;
  };
  int64_t B = prod(batch), M = prod(mL), N = prod(nL), K = prod(kL);
  Tensor a = inputs[0].permute(perm(la, {&batch, &mL, &kL})).contiguous();
  Tensor b = inputs[1].permute(perm(lb, {&batch, &kL, &nL})).contiguous();
  std::vector<int> resLabels;
  Shape resShape;
  for (const auto *g : {&batch, &mL, &nL})
    for (int l : *g) {
      resLabels.push_back(l);
      resShape.push_back(p.sizes.at(l));
    }
  Tensor res = Tensor::empty(out.dtype(), resShape);
  const T *A = a.data<T>(), *Bp = b.data<T>();
  T *C = res.data<T>();
  for (int64_t i = 0; i < B; ++i)
    linalg::gemm(false, false, M, N, K, A + i * M * K, K, Bp + i * K * N, N,
                 T(0), C + i * M * N, N);
  out = res.permute(perm(resLabels, {&p.outLabels})).contiguous();
  return true;
}

Status einsumKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() >= 1, "einsum: expected at least one operand");
  KILN_CHECK(ctx.attrs.has("equation"), "einsum: missing 'equation'");
  DType dt = ctx.input(0).dtype();
  for (size_t i = 1; i < ctx.numInputs(); ++i)
    KILN_CHECK(ctx.input(i).dtype() == dt, "einsum: operand ", i, " is ",
               ctx.input(i).typeString(), " but operand 0 is ",
               ctx.input(0).typeString());
  std::vector<Shape> shapes;
  for (const Tensor &t : ctx.inputs)
    shapes.push_back(t.shape());
  auto plan = einsum::planEinsum(ctx.attrs.getString("equation"), shapes);
  if (!plan)
    return plan.status();
  Shape outShape;
  for (int l : plan->outLabels)
    outShape.push_back(plan->sizes.at(l));
  std::vector<Tensor> inputs;
  for (const Tensor &t : ctx.inputs)
    inputs.push_back(t.contiguous());
  Tensor out = Tensor::empty(dt, outShape);
  Status st = Status::ok();
  visitDType(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = Status::error("einsum: bool operands are not supported");
    } else {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
        if (einsumAsMatmul<T>(*plan, inputs, out))
          return;
      einsumLoop<T>(*plan, inputs, out);
    }
  });
  KILN_RETURN_IF_ERROR(st);
  ctx.outputs[0] = out;
  return Status::ok();
}

} // namespace

void registerLinalgKernels(Dispatcher &d) {
  d.add("matmul", Device::CPU, kNumericTypes, matmulKernel);
  d.add("einsum", Device::CPU, kNumericTypes, einsumKernel);
  linalg::registerConvolutionKernels(d);
  linalg::registerPoolingKernels(d);
}

} // namespace kiln
