//===- Determinant.cpp - The reference Det kernel -------------------------===//
//
// This file implements the CPU reference kernel of kiln.det (ONNX Det): for
// a floating-point operand of shape [..., M, M], the determinant of each
// M x M matrix, shape [...]. Each matrix is factored by LU decomposition with
// partial pivoting in double precision whatever the dtype (f16 and bf16 are
// widened like every other reference kernel does, f32 and f64 too), and the
// product of the pivots, with the sign of the row exchanges, is rounded to
// the operand's dtype. An empty matrix (M = 0) has determinant 1.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "kiln/runtime/Dispatcher.h"

#include <cmath>
#include <type_traits>
#include <utility>

namespace kiln {

namespace {

/// Determinant of the row-major n x n matrix `a` (overwritten by its LU
/// factors).
double luDeterminant(double *a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    double best = std::fabs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      double v = std::fabs(a[i * n + k]);
      if (v > best) {
        best = v;
        pivot = i;
      }
    }
    if (a[pivot * n + k] == 0.0) {
      // Singular: the column is zero below the diagonal; like LAPACK's
      // getrf, go on (the product of the pivots is 0, or NaN with an inf).
      det *= 0.0;
      continue;
    }
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j)
        std::swap(a[k * n + j], a[pivot * n + j]);
      det = -det;
    }
    const double diag = a[k * n + k];
    det *= diag;
    for (int64_t i = k + 1; i < n; ++i) {
      const double factor = a[i * n + k] / diag;
      if (factor == 0.0)
        continue;
      for (int64_t j = k + 1; j < n; ++j)
        a[i * n + j] -= factor * a[k * n + j];
    }
  }
  return det;
}

template <typename T> double toDouble(T v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return static_cast<double>(static_cast<float>(v));
}

Status detKernel(KernelContext &ctx) {
  KILN_CHECK(ctx.numInputs() == 1, "det: expected 1 operand, got ",
             ctx.numInputs());
  KILN_CHECK(ctx.outputs.size() == 1, "det: expected 1 result slot, got ",
             ctx.outputs.size());
  const Tensor &x = ctx.input(0);
  KILN_CHECK(x.device() == Device::CPU, "det: the operand is on ",
             deviceName(x.device()), "; the reference kernels run on the cpu");
  KILN_CHECK(isFloatingPoint(x.dtype()),
             "det: the operand must be a floating-point tensor, got ",
             x.typeString());
  KILN_CHECK(x.rank() >= 2,
             "det: the operand must have shape [..., M, M], got ",
             x.typeString());
  const int64_t m = x.dim(x.rank() - 1);
  KILN_CHECK(x.dim(x.rank() - 2) == m,
             "det: the matrices must be square ([..., M, M]), got ",
             x.typeString());
  Shape outShape(x.shape().begin(), x.shape().end() - 2);
  Tensor out = Tensor::empty(x.dtype(), outShape);
  const int64_t batch = numElements(outShape);
  Tensor c = x.contiguous();
  std::vector<double> matrix(static_cast<size_t>(m * m));
  visitDType(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      const T *in = c.data<T>();
      T *o = out.data<T>();
      for (int64_t b = 0; b < batch; ++b) {
        const T *src = in + b * m * m;
        for (int64_t i = 0; i < m * m; ++i)
          matrix[i] = toDouble(src[i]);
        double det = luDeterminant(matrix.data(), m);
        if constexpr (std::is_same_v<T, double>)
          o[b] = det;
        else
          o[b] = T(static_cast<float>(det));
      }
    }
  });
  ctx.outputs[0] = std::move(out);
  return Status::ok();
}

} // namespace

/// Registers kiln.det for the floating-point dtypes.
void registerDeterminantKernels(Dispatcher &d) {
  d.add("det", Device::CPU, kFloatTypes, detKernel);
}

} // namespace kiln
