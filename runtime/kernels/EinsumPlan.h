//===- EinsumPlan.h - The contraction plan of kiln.einsum -------*- C++ -*-===//
//
// This file declares how a kiln.einsum (ONNX Einsum) contracts: the label of
// every dim of every operand, the output's labels and every label's size,
// parsed from the equation and the operands' shapes. The reference kernel
// (Linalg.cpp) walks the plan; the CUDA target
// (targets/cuda/CudaEinsumKernel.cpp) plans at compile time and prints the
// plan's strides into its kernel, so both contract the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_KERNELS_EINSUMPLAN_H
#define KILN_RUNTIME_KERNELS_EINSUMPLAN_H

#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {
namespace einsum {

/// Label ids: ASCII letters keep their code (so sorting is ASCII order);
/// ellipsis dim j (of the broadcast ellipsis, left to right) is 128 + j.
constexpr int kEllipsisBase = 128;

/// The whole contraction: per-input label of every dim, output labels and
/// the size of every label (a size-1 dim broadcasts against the others).
struct EinsumPlan {
  std::vector<std::vector<int>> inputLabels;
  std::vector<int> outLabels;
  std::map<int, int64_t> sizes;
};

/// Parses `eq` (spaces ignored, `->` optional) against the operands'
/// shapes; an error names the term that does not fit.
Expected<EinsumPlan> planEinsum(std::string eq,
                                const std::vector<Shape> &inputs);

} // namespace einsum
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_EINSUMPLAN_H
