//===- FusionRules.h - Which ops and groups may form a kernel ---*- C++ -*-===//
//
// This file declares the predicates of kernel fusion: which ops may enter a
// kiln.fusion region, what a reduction's domain is, and which groups of ops
// may form one region. The fusion pass (FuseOps.cpp) decides with them, and
// the code generator asserts on them (verifyFusionRules) before lowering a
// region, so both sides agree on what a region can hold.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_FUSIONRULES_H
#define KILN_PASSES_FUSIONRULES_H

#include "ir/KilnOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace kiln {

/// The iteration domain of a reduction: the static shape of the reduced
/// operand and the reduced axes (normalized to [0, rank), sorted, unique).
/// Every reduction of one region has the same domain.
struct ReductionDomain {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> axes;

  bool operator==(const ReductionDomain &other) const {
    return shape == other.shape && axes == other.axes;
  }
  bool operator!=(const ReductionDomain &other) const {
    return !(*this == other);
  }
  /// The shape of the reduced value: reduced dims become 1 with `keepdims`,
  /// otherwise they are removed.
  llvm::SmallVector<int64_t> reducedShape(bool keepdims) const;
  /// True when a value of `shape` may live in a region of this domain: the
  /// full shape, the reduced shape (with or without kept dims), or a shape
  /// that broadcasts against the full shape without growing it.
  bool fits(llvm::ArrayRef<int64_t> shape) const;
  /// True when a region of this domain may return a value of `shape`: the
  /// full shape or the reduced shape (with or without kept dims).
  bool canReturn(llvm::ArrayRef<int64_t> shape) const;
};

/// The domain of `op`, a reduce_sum/mean/max/min/prod whose input has a
/// static shape and whose axes come from a kiln.constant; nullopt otherwise
/// (also for `noop_with_empty_axes = 1` with empty axes, the identity).
std::optional<ReductionDomain> getReductionDomain(mlir::Operation *op);

/// True when `op` may enter a fusion region: an elementwise op, a reduction
/// (with a domain) or a view, with statically shaped operands and results
/// and parameter operands produced by kiln.constant; or a constant that may
/// be inlined (FusionOp::isInlinableConstant).
bool canEnterRegion(mlir::Operation *op);

/// True when `op` is a GEMM or convolution (trait Kiln_Library): never
/// inside a region, called through the library (BLAS) by the wrapper.
bool isLibraryOp(mlir::Operation *op);

/// Checks that `ops` (non-constant ops that each canEnterRegion), returning
/// `results`, form one valid region: at most one reduction domain; in a
/// reduction region every value fits the domain and every result is full or
/// reduced; in a pointwise region every result has the same shape (the
/// iteration domain). On failure returns false and, when `why` is given,
/// says which rule failed.
bool canFormRegion(llvm::ArrayRef<mlir::Operation *> ops,
                   llvm::ArrayRef<mlir::Value> results,
                   std::string *why = nullptr);

/// The reduction domain of a region; nullopt for a pointwise region.
std::optional<ReductionDomain> getReductionDomain(FusionOp op);

/// Checks a materialized region against the rules above (the op verifier
/// checks structure only): every inner op canEnterRegion, the group rules
/// hold, and `kind` matches. For the code generator's assertions and tests.
mlir::LogicalResult verifyFusionRules(FusionOp op, std::string *why = nullptr);

} // namespace kiln

#endif // KILN_PASSES_FUSIONRULES_H
