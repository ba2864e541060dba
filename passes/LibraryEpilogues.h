//===- LibraryEpilogues.h - What a library epilogue folds ----- -*- C++ -*-===//
//
// This file declares the matchers that the targets' lowering passes
// (targets/cuda/LowerCudaLibraryCalls.cpp,
// targets/cpu/LowerCpuLibraryCalls.cpp) share to decide which part of the
// fusion after a matmul or convolution a library call computes itself: a bias,
// a residual, then ReLU or GELU (cuBLASLt's epilogues, cuDNN's fused bias +
// residual + ReLU, oneDNN's post-ops). What each library can fold is an
// EpilogueAbility; the names of the results (kiln.library_call's `epilogue`)
// are one vocabulary.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_LIBRARYEPILOGUES_H
#define KILN_PASSES_LIBRARYEPILOGUES_H

#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace kiln {

/// The activation an epilogue applies last.
enum class EpilogueActivation {
  None,
  Relu,
  /// GELU, tanh approximation (matmul).
  GeluTanh,
  /// GELU, exact (erf) form (matmul).
  GeluErf,
  Sigmoid,
  Tanh,
  /// x * max(0, min(1, x / 6 + 1 / 2)).
  HardSwish,
  /// min(max(x, 0), 6) (ReLU6: ONNX Clip(x, 0, 6)).
  Relu6,
};

/// The part of a fusion that a library call's epilogue computes:
/// act(result + bias + residual), each part optional.
struct Epilogue {
  mlir::Value source; ///< the library call's own result, read by the fusion
  mlir::Value bias; ///< added: a vector (matmul) or per-channel (conv); or null
  mlir::Value residual; ///< added: a tensor of the result's type; or null
  EpilogueActivation activation = EpilogueActivation::None;
};

/// What a library's epilogue can compute, beyond a bias and ReLU.
struct EpilogueAbility {
  /// A matmul's epilogue adds a residual of the result's type (oneDNN's
  /// binary post-op; cuBLASLt's epilogues do not).
  bool matmulResidual = false;
  /// A matmul's epilogue computes GELU in its tanh form (and, with
  /// geluErf, in its erf form); false for the CPU target's panel GEMM.
  bool gelu = true;
  /// A matmul's epilogue computes ONNX's exact (erf) GELU.
  bool geluErf = false;
  /// A convolution's epilogue must end in ReLU (cuDNN's fused convolution).
  bool convNeedsRelu = true;
  /// After the adds, kiln.sigmoid, kiln.tanh or kiln.hard_swish besides
  /// kiln.relu (oneDNN's eltwise post-ops).
  bool moreActivations = false;
  /// After the adds, ReLU6 (kiln.max with 0 then kiln.min with 6, as Clip
  /// traces; oneDNN's eltwise_clip).
  bool relu6 = false;
};

/// The name of an epilogue for kiln.library_call ("bias_relu", ...): the
/// parts joined by '_' in the order bias, residual, activation ("relu",
/// "gelu_tanh", "gelu_erf", "sigmoid", "tanh", "hard_swish", "relu6");
/// "none".
std::string epilogueName(const Epilogue &e);

/// The epilogue a library computes for a single GEMM's result `mm` in its
/// only user, a kiln.fusion: a bias vector of the last dim's size and/or
/// (with `ability.matmulResidual`) a residual, then ReLU; or GELU after an
/// optional bias, in its tanh form (as exporters write it, op for op), or
/// in ONNX's exact erf form with `ability.geluErf`; or (with
/// `ability.moreActivations`) sigmoid, tanh or hard swish after the adds.
std::optional<Epilogue> matmulEpilogue(mlir::Value mm,
                                       const EpilogueAbility &ability = {});

/// The epilogue a library's fused convolution computes for `conv` in its
/// only user: at most one per-channel bias (channel dim 1, or the last one
/// for a channels-last convolution) and one residual, then ReLU (required
/// with `ability.convNeedsRelu`) or another activation of
/// `ability.moreActivations` or `ability.relu6`.
std::optional<Epilogue> convEpilogue(mlir::Value conv,
                                     const EpilogueAbility &ability = {});

} // namespace kiln

#endif // KILN_PASSES_LIBRARYEPILOGUES_H
