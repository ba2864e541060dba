//===- StaticEinsum.h - A kiln.einsum planned at compile time ---*- C++ -*-===//
//
// This file declares planStaticEinsum, which the CPU and CUDA einsum kernels
// (targets/cpu/CppEinsumKernel.cpp, targets/cuda/CudaEinsumKernel.cpp) share:
// for a kiln.einsum of static shapes and one element type, the operands'
// shapes, the reference kernel's plan (runtime/kernels/EinsumPlan.h) and its
// loops, so that a generated kernel contracts as the reference does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_STATICEINSUM_H
#define KILN_CODEGEN_STATICEINSUM_H

#include "codegen/ExprPrinter.h"
#include "ir/KilnOps.h"
#include "runtime/kernels/EinsumPlan.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace codegen {

/// An einsum whose sizes are known when compiling.
struct StaticEinsum {
  ScalarType type = ScalarType::F32;
  std::vector<Shape> shapes;
  einsum::EinsumPlan plan;
  einsum::EinsumLoops loops;
  /// The number of output elements (the product of the output labels'
  /// sizes).
  int64_t outputElements = 0;
};

/// A label's name in generated comments: its letter, or `...<j>` for
/// dim j of the ellipsis.
std::string einsumLabelName(int label);

/// The plan of `op` when its result and every operand have static shapes
/// and the result's element type, the output is not empty and has fewer
/// than 2^62 elements, and the equation plans; nullopt otherwise (the
/// reference kernel then runs it, and reports a bad equation).
std::optional<StaticEinsum> planStaticEinsum(EinsumOp op);

} // namespace codegen
} // namespace kiln

#endif // KILN_CODEGEN_STATICEINSUM_H
