//===- SymbolicSizeInference.h - Which sizes follow the symbols -*- C++ -*-===//
//
// This file declares the step of the symbolic compile
// (docs/dynamic-shapes.md) that finds which sizes of a lowered graph follow
// its size symbols: the graph lowered at the bound (every symbol at its
// range's maximum) is compared, op by op, with the same graph lowered at
// probe sizes (one symbol moved at a time). The two must be the same
// program: the same ops, operands, attributes and kernels (the same index
// arithmetic) — only sizes may differ, and each size that differs must be a
// product of powers of the symbols. Then the bound graph is annotated
// (codegen/SymbolicShapes.h) and code generation prints those sizes as
// run-time expressions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_SYMBOLICSIZEINFERENCE_H
#define KILN_COMPILER_SYMBOLICSIZEINFERENCE_H

#include "kiln/runtime/SymbolicDim.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// A graph lowered with one symbol at a probe size, the others at their
/// bounds.
struct SizeProbe {
  mlir::func::FuncOp graph;
  /// The symbol moved (an index into the symbols) and its size.
  size_t symbol = 0;
  int64_t size = 0;
};

/// The probe sizes of a symbol of range [min, max], in the order to try
/// them: max - 1 (inside the range, of the other parity: a decision that
/// depends on divisibility shows as a difference), then max - 2, max - 4,
/// max - 8 for models that trace only at multiples (a Reshape that halves
/// the batch; its size expression then has a divisor, and the package
/// guards it), each when at least 2, then max + 1.
std::vector<int64_t> probeSizesOf(const SizeSymbol &symbol);

/// Compares `bound` with each probe and, when they are the same program up
/// to sizes that are products of the symbols, annotates `bound`
/// (kiln.size_symbols, kiln.sym_dims, kiln.sym_loops) and returns nullopt.
/// Otherwise returns why not, naming the op ("node 'fc1' (kiln.fusion): its
/// kernel's index arithmetic depends on 'batch'"); `bound` is unchanged.
std::optional<std::string>
inferSymbolicSizes(mlir::func::FuncOp bound,
                   const std::vector<SizeSymbol> &symbols,
                   const std::vector<SizeProbe> &probes);

} // namespace kiln

#endif // KILN_COMPILER_SYMBOLICSIZEINFERENCE_H
