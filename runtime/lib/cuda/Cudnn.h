//===- Cudnn.h - Convolution through cuDNN --------------------*- C++ -*-===//
//
// This file declares the runtime's cuDNN entry points, behind the
// kiln_cuda_conv service (see CudaServices.h for the semantics). cuDNN 9 is
// loaded with dlopen on first use, never linked.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_CUDA_CUDNN_H
#define KILN_RUNTIME_LIB_CUDA_CUDNN_H

#include "kiln/runtime/Status.h"

#include <cstddef>
#include <cstdint>

namespace kiln {
namespace cuda {

/// The arguments of kiln_cuda_conv. Shapes have 2 + spatialDims entries,
/// strides and dilations spatialDims, pads 2 * spatialDims ([begin...,
/// end...]).
struct ConvArgs {
  int dtype = 0;
  int spatialDims = 2;
  /// KILN_CUDA_LAYOUT_NCHW (0): x, y and z are [N, C, spatial...] and w
  /// [M, C/group, kernel...]; KILN_CUDA_LAYOUT_NHWC (1, channels last): x, y
  /// and z are [N, spatial..., C] and w [M, kernel..., C/group]. The shapes
  /// are given as stored.
  int layout = 0;
  const int64_t *xShape = nullptr;
  const void *x = nullptr;
  const int64_t *wShape = nullptr;
  const void *w = nullptr;
  const void *bias = nullptr;
  /// A residual of y's shape, added before the activation (null: none).
  const void *z = nullptr;
  /// y = relu(conv + bias + z), in one cuDNN call where cuDNN takes it.
  bool relu = false;
  int64_t group = 1;
  const int64_t *strides = nullptr;
  const int64_t *pads = nullptr;
  const int64_t *dilations = nullptr;
  const int64_t *yShape = nullptr;
  void *y = nullptr;
  void *stream = nullptr;
};

/// Checks the arguments of a convolution without touching CUDA or cuDNN:
/// dtype, ranks, the channel and group relations, symmetric pads and the
/// output shape the geometry implies.
Status checkConvArgs(const ConvArgs &args);

/// Enqueues y = conv(x, w) (+ bias) (+ z), then ReLU when args.relu, on
/// args.stream through cuDNN.
Status conv(const ConvArgs &args);

/// Loads cuDNN (once; no CUDA driver needed) and says why it cannot be
/// used: e.g. "cuDNN not found (libcudnn.so.9): install it or add its folder
/// to LD_LIBRARY_PATH". On success, `library` (when not null) receives the
/// path that was opened.
Status cudnnAvailable(std::string *library = nullptr);

} // namespace cuda
} // namespace kiln

#endif // KILN_RUNTIME_LIB_CUDA_CUDNN_H
