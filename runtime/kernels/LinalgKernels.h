//===- LinalgKernels.h - Shared helpers of the linalg kernels --*- C++ -*-===//
//
// This file declares the private registration entry points of the
// convolution and pooling kernel families (called from
// registerLinalgKernels) and the row-major GEMM helpers they share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_LINALGKERNELS_H
#define KILN_RUNTIME_KERNELS_LINALGKERNELS_H

#include "kiln/runtime/Dispatcher.h"

#include <cstdint>

namespace kiln {
namespace linalg {

/// Registers conv and conv_transpose (Convolution.cpp).
void registerConvolutionKernels(Dispatcher &d);
/// Registers max_pool and avg_pool (Pooling.cpp).
void registerPoolingKernels(Dispatcher &d);

/// Row-major GEMM through BLAS: C[M,N] = op(A)[M,K] * op(B)[K,N] + beta * C,
/// where op transposes when the flag is set. `lda`, `ldb`, `ldc` are the
/// row strides of A, B and C as stored. Handles M, N or K equal to 0.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
          float *c, int64_t ldc);
/// The double-precision variant of gemm.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const double *a, int64_t lda, const double *b, int64_t ldb,
          double beta, double *c, int64_t ldc);

} // namespace linalg
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_LINALGKERNELS_H
