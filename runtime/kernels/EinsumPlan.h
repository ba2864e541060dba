//===- EinsumPlan.h - The contraction plan of kiln.einsum -------*- C++ -*-===//
//
// This file declares how a kiln.einsum (ONNX Einsum) contracts: the label of
// every dim of every operand, the output's labels and every label's size,
// parsed from the equation and the operands' shapes, and the loops that
// walk it. The reference kernel (Linalg.cpp) walks the loops; the CPU and
// CUDA targets (targets/cpu/CppEinsumKernel.cpp,
// targets/cuda/CudaEinsumKernel.cpp) plan at compile time and print the
// loops' sizes and strides into their kernels, so all three contract the
// same way.
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

/// The joint index space of a plan: the output's labels, then the summed
/// ones (ascending), each label's size, and each operand's offset step when a
/// label advances by one (0 where the operand lacks the label or has it as a
/// broadcast size-1 dim).
struct EinsumLoops {
  std::vector<int> order;
  std::vector<int64_t> sizes;
  /// The first `numOutput` labels of `order` are the output's.
  size_t numOutput = 0;
  /// strides[i][d]: operand i's step when label order[d] advances.
  std::vector<std::vector<int64_t>> strides;
};

/// The loops of `p` over operands of the shapes `inputs` (those it was
/// planned for), in row-major strides.
EinsumLoops planLoops(const EinsumPlan &p, const std::vector<Shape> &inputs);

} // namespace einsum
} // namespace kiln

#endif // KILN_RUNTIME_KERNELS_EINSUMPLAN_H
