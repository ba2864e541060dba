//===- CudaEpilogues.h - What a library call's epilogue folds --*- C++ -*-===//
//
// This file declares the matchers of kiln-lower-cuda
// (LowerCudaLibraryCalls.cpp) that decide which part of the fusion after a
// matmul or convolution the library call computes itself: cuBLASLt's bias, ReLU
// and GELU (tanh form) epilogues, cuDNN's fused bias + residual + ReLU.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CUDA_CUDAEPILOGUES_H
#define KILN_TARGETS_CUDA_CUDAEPILOGUES_H

#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace kiln {

/// The part of a fusion that a library call's epilogue computes.
struct Epilogue {
  mlir::Value source; ///< the library call's own result, read by the fusion
  mlir::Value bias; ///< added: a vector (matmul) or per-channel (conv); or null
  mlir::Value
      residual; ///< added: a tensor of the result's type (conv); or null
  bool relu = false;
  /// GELU, tanh approximation, after the bias (matmul).
  bool geluTanh = false;
};

/// The name of an epilogue for kiln.library_call ("bias_relu", ...).
std::string epilogueName(const Epilogue &e);

/// The epilogue cuBLASLt computes for a single GEMM's result `mm` in its
/// only user, a kiln.fusion: a bias vector of the last dim's size and/or
/// ReLU, or GELU in its tanh form (as exporters write it, op for op) after
/// an optional bias. ONNX's exact (erf) GELU never matches.
std::optional<Epilogue> matmulEpilogue(mlir::Value mm);

/// The epilogue cuDNN's fused convolution computes for `conv` in its only
/// user: ReLU after at most one per-channel bias and one residual (channel
/// dim 1, or the last one for a channels-last convolution).
std::optional<Epilogue> convEpilogue(mlir::Value conv);

} // namespace kiln

#endif // KILN_TARGETS_CUDA_CUDAEPILOGUES_H
