/*===- myops_cuda.cu - CUDA kernels of the example custom-op library -------===*
 *
 * This file implements the CUDA kernels of examples/custom_ops/myops.c's two
 * operators (kiln/custom_op.h's KilnCustomCudaKernelFn): Swish as one
 * grid-stride loop, RowL2Norm as one block per row with a shared-memory tree
 * sum in double. They run on the stream Kiln passes, on device pointers, and
 * neither allocates nor synchronizes, so a package run that calls them can
 * be captured in a CUDA graph. Built into libmyops_cuda.so with myops.c:
 *
 *   nvcc -shared -Xcompiler -fPIC -O2 -arch=sm_90 -cudart static
 *        -DKILN_MYOPS_CUDA -I<kiln>/runtime/include myops_cuda.cu myops.c
 *        -o libmyops_cuda.so
 *
 *===----------------------------------------------------------------------===*/

#include "kiln/custom_op.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

namespace {

__global__ void swishKernel(const float *x, float *y, long long n, float beta) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i] / (1.0f + expf(-beta * x[i]));
}

constexpr int kRowThreads = 256;

__global__ void rowNormKernel(const float *x, float *y, long long cols) {
  __shared__ double partial[kRowThreads];
  const float *row = x + blockIdx.x * cols;
  double s = 0;
  for (long long c = threadIdx.x; c < cols; c += kRowThreads)
    s += (double)row[c] * row[c];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = kRowThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    y[blockIdx.x] = (float)sqrt(partial[0]);
}

long long numel(const KilnTensorType &t) {
  long long n = 1;
  for (int i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

/** 0, or 1 with the launch's error in `err`. */
int launched(const char *what, char *err, size_t errlen) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    return 0;
  snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
  return 1;
}

} // namespace

extern "C" int kiln_example_swish_cuda(const KilnTensor *in, int32_t,
                                       const KilnAttribute *attrs,
                                       int32_t nattrs, KilnTensor *out,
                                       int32_t, void *stream, char *err,
                                       size_t errlen) {
  float beta = 1.0f;
  for (int32_t i = 0; i < nattrs; ++i)
    if (!strcmp(attrs[i].name, "beta") && attrs[i].kind == KILN_ATTR_FLOAT)
      beta = (float)attrs[i].f;
  long long n = numel(in[0].type);
  if (n == 0)
    return 0;
  int blocks = (int)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
  swishKernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(
      (const float *)in[0].data, (float *)out[0].data, n, beta);
  return launched("Swish", err, errlen);
}

extern "C" int kiln_example_rownorm_cuda(const KilnTensor *in, int32_t,
                                         const KilnAttribute *, int32_t,
                                         KilnTensor *out, int32_t,
                                         void *stream, char *err,
                                         size_t errlen) {
  long long rows = in[0].type.shape[0], cols = in[0].type.shape[1];
  if (rows == 0)
    return 0;
  rowNormKernel<<<(unsigned)rows, kRowThreads, 0, (cudaStream_t)stream>>>(
      (const float *)in[0].data, (float *)out[0].data, cols);
  return launched("RowL2Norm", err, errlen);
}
