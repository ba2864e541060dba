/*===- CudaServices.h - CUDA services the runtime offers packages -*- C -*-===//
 *
 * This file declares the C functions that libkiln_runtime.so exports for the
 * host code of a CUDA package (the generated wrapper in the package library):
 *kernel launches, copies, stream synchronisation, cuBLASLt matrix products and
 * cuDNN convolutions. The wrapper does not link the CUDA libraries; these
 * symbols are resolved when the package library is loaded into a process that
 *has loaded libkiln_runtime.so. The runtime itself loads the CUDA driver,
 * cuBLASLt and cuDNN with dlopen on first use.
 *
 * Every function makes the runtime's CUDA context current on the calling
 * thread and returns 0 on success, or nonzero with a NUL-terminated message
 * (at most `errlen` bytes) in `err`. Pointers named "device" are CUDA device
 * pointers (CUdeviceptr values); `stream` is a CUstream (null: the legacy
 * default stream); `function` is a CUfunction. docs/cuda-backend.md fixes
 * this contract.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_CUDASERVICES_H
#define KILN_RUNTIME_CUDASERVICES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_RUNTIME_EXPORT __attribute__((visibility("default")))
#else
#define KILN_RUNTIME_EXPORT
#endif

/** kiln_cuda_memcpy kinds. */
#define KILN_CUDA_HOST_TO_DEVICE 0
#define KILN_CUDA_DEVICE_TO_HOST 1
#define KILN_CUDA_DEVICE_TO_DEVICE 2

/** kiln_cuda_matmul epilogues. */
#define KILN_CUDA_EPILOGUE_NONE 0
#define KILN_CUDA_EPILOGUE_RELU 1
/** cuBLASLt's GELU, which is the tanh approximation
 *  0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), not ONNX's erf GELU: do not
 *  fuse an exact (erf) Gelu into it. */
#define KILN_CUDA_EPILOGUE_GELU_TANH 2

/** kiln_cuda_conv layouts: channels first (NCHW, NCDHW) or channels last
 *  (NHWC, NDHWC). */
#define KILN_CUDA_LAYOUT_NCHW 0
#define KILN_CUDA_LAYOUT_NHWC 1

/** Launches `function` (cuLaunchKernel) with the given grid, block, dynamic
 *  shared memory and kernel arguments (`args[i]` points to the i-th
 *  argument's value), asynchronously on `stream`. */
KILN_RUNTIME_EXPORT int
kiln_cuda_launch(void *function, unsigned gridX, unsigned gridY,
                 unsigned gridZ, unsigned blockX, unsigned blockY,
                 unsigned blockZ, unsigned sharedBytes, void *stream,
                 void **args, char *err, size_t errlen);

/** Loads kernel `name` of the module (cubin or PTX) in the file at `path`
 *  and returns its CUfunction in `*function`: how a program calls a CUDA
 *  package's kernels one by one (<package>_<kernel>(function, ...), the
 *  package header) or creates a model without kiln::Model. Each file is
 *  loaded once per process, into the runtime's context, and stays loaded
 *  until the process exits. */
KILN_RUNTIME_EXPORT int kiln_cuda_load_kernel(const char *path,
                                              const char *name, void **function,
                                              char *err, size_t errlen);

/** Copies `bytes` bytes; `kind` is one of KILN_CUDA_*_TO_* (0 host->device,
 *  1 device->host, 2 device->device). Asynchronous on `stream` (a copy from
 *  or to pageable host memory returns once the host buffer may be reused /
 *  holds the data only after kiln_cuda_stream_synchronize). */
KILN_RUNTIME_EXPORT int kiln_cuda_memcpy(void *dst, const void *src,
                                         size_t bytes, int kind, void *stream,
                                         char *err, size_t errlen);

/** Sets `bytes` bytes of device memory at `dst` to `value` (an unsigned
 *  byte), asynchronously on `stream` (cuMemsetD8Async). An addition to the
 *  contract of docs/cuda-backend.md: for outputs that start zeroed. */
KILN_RUNTIME_EXPORT int kiln_cuda_memset(void *dst, int value, size_t bytes,
                                         void *stream, char *err,
                                         size_t errlen);

/** Waits until all work enqueued on `stream` is done; reports asynchronous
 *  errors of that work (a faulting kernel). */
KILN_RUNTIME_EXPORT int kiln_cuda_stream_synchronize(void *stream, char *err,
                                                     size_t errlen);

/** Row-major batched GEMM through cuBLASLt:
 *    D[b] = epilogue(op(A[b]) x op(B[b]) + bias)      (bias: n values or null)
 *  dtype: kiln::DType code: 0 f32 (computed in fp32, CUBLAS_COMPUTE_32F, no
 *  TF32), 1 f16 or 2 bf16 (fp32 accumulation); A, B, D and bias have that
 *  dtype. op(X) = X^T when transX; A is m x k after op, B is k x n after
 *  op, D is m x n, all contiguous row-major matrices; strides are in
 *  elements between consecutive batch matrices (0: the same matrix for every
 *  batch, for A and B only). epilogue: KILN_CUDA_EPILOGUE_*. `workspace` of
 *  `workspaceBytes` bytes is cuBLASLt's scratch (device memory not used by
 *  other work on other streams at the same time); null: the runtime uses
 *  its own 32 MiB workspace per stream. Asynchronous on `stream`. */
KILN_RUNTIME_EXPORT int
kiln_cuda_matmul(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                 const void *a, int64_t strideA, int transA, const void *b,
                 int64_t strideB, int transB, void *d, int64_t strideD,
                 const void *bias, int epilogue, void *workspace,
                 size_t workspaceBytes, void *stream, char *err,
                 size_t errlen);

/** Convolution (ONNX Conv, cross-correlation) through cuDNN:
 *    y = conv(x, w) + bias                 (bias: M values or null)
 *  dtype: kiln::DType code: 0 f32 (computed in fp32 with CUDNN_FMA_MATH, no
 *  TF32, so results match the CPU reference within 1e-3), 1 f16 or 2 bf16
 *  (tensor cores, fp32 accumulation); x, w, bias and y have that dtype and
 *  are packed device buffers. spatialDims is 1 to 3. With layout
 *  KILN_CUDA_LAYOUT_NCHW xShape is [N, C, spatial...], wShape [M, C / group,
 *  kernel...], yShape [N, M, spatial...]; with KILN_CUDA_LAYOUT_NHWC
 *  (channels last) they are [N, spatial..., C], [M, kernel..., C / group]
 *  and [N, spatial..., M]: each shape as the buffer stores it (checked
 *  against the geometry); strides and dilations have
 *  spatialDims entries, pads 2 * spatialDims ([begin..., end...]), and the
 *  pads must be symmetric (begin == end: otherwise an error). Descriptors
 *  and the algorithm are cached per configuration; each stream gets its own
 *  cuDNN handle and workspace (grown as needed). Asynchronous on `stream`.
 *  cuDNN 9 is loaded with dlopen ("libcudnn.so.9", "libcudnn.so"; also from
 *  $KILN_CUDNN_DIR); without it: "cuDNN not found (libcudnn.so.9): ...". */
KILN_RUNTIME_EXPORT int
kiln_cuda_conv(int dtype, int spatialDims, int layout, const int64_t *xShape,
               const void *x, const int64_t *wShape, const void *w,
               const void *bias, int64_t group, const int64_t *strides,
               const int64_t *pads, const int64_t *dilations,
               const int64_t *yShape, void *y, void *stream, char *err,
               size_t errlen);

/** y = relu(conv(x, w) + bias + z), as kiln_cuda_conv with a residual `z`
 *  (y's shape and dtype; null: none) and a ReLU that keeps NaN. cuDNN runs
 *  it as one cudnnConvolutionBiasActivationForward (a zero bias stands in
 *  for a null one) where it takes the configuration, otherwise as
 *  separate cuDNN calls. `z` must not overlap `y`. */
KILN_RUNTIME_EXPORT int
kiln_cuda_conv_relu(int dtype, int spatialDims, int layout,
                    const int64_t *xShape,
                    const void *x, const int64_t *wShape, const void *w,
                    const void *bias, const void *z, int64_t group,
                    const int64_t *strides, const int64_t *pads,
                    const int64_t *dilations, const int64_t *yShape, void *y,
                    void *stream, char *err, size_t errlen);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_CUDASERVICES_H */
