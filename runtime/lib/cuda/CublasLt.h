//===- CublasLt.h - Row-major batched GEMM through cuBLASLt ----*- C++ -*-===//
//
// This file declares the runtime's cuBLASLt entry point, behind the
// kiln_cuda_matmul service (see CudaServices.h for the semantics). cuBLASLt
// is loaded with dlopen on first use.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUBLASLT_H
#define KILN_RUNTIME_LIB_CUDA_CUBLASLT_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <cstdint>

namespace kiln {
namespace cuda {

/// The arguments of kiln_cuda_matmul.
struct MatmulArgs {
  int dtype = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const void *a = nullptr;
  int64_t strideA = 0;
  bool transA = false;
  const void *b = nullptr;
  int64_t strideB = 0;
  bool transB = false;
  void *d = nullptr;
  int64_t strideD = 0;
  const void *bias = nullptr;
  int epilogue = 0;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  void *stream = nullptr;
};

/// Enqueues D = epilogue(op(A) x op(B) + bias) on args.stream.
Status matmul(const MatmulArgs &args);

} // namespace cuda
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUBLASLT_H
