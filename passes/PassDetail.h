//===- PassDetail.h - Helpers Kiln's graph passes share ---------*- C++ -*-===//
//
// This file declares the small helpers the passes of passes/ share: testing
// for kiln.constant operands and splat values, creating kiln ops with their
// inferred result types through a rewriter (so pattern drivers see every
// change), building constants, and telling whether an op lives inside a
// kiln.fusion region (which the graph passes leave alone).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PASSDETAIL_H
#define KILN_PASSES_PASSDETAIL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <optional>

namespace kiln {
namespace passes {

/// True when `v` is the result of a kiln.constant.
bool isKilnConstant(mlir::Value v);
/// True for a weight: an argument of its function tagged kiln.weight or a
/// kiln.constant at the top level of a function.
bool isWeight(mlir::Value v);
/// The value of a kiln.constant result; null otherwise.
mlir::ElementsAttr getConstantValue(mlir::Value v);
/// The value of a splat kiln.constant of a float or integer element type,
/// as a double; nullopt otherwise.
std::optional<double> getSplatValue(mlir::Value v);
/// The elements of a kiln.constant with an integer element type; nullopt
/// otherwise.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value v);
/// True when `op` is nested inside a kiln.fusion op.
bool isInsideFusion(mlir::Operation *op);
/// Applies `patterns` greedily to the ops under `root` that are outside
/// kiln.fusion regions (the fusion ops themselves included): the driver's
/// constant folding must not move constants out of a region.
void applyPatternsOutsideFusions(mlir::Operation *root,
                                 const mlir::FrozenRewritePatternSet &patterns);

/// Creates the kiln op `name` with its result types inferred (no diagnostics
/// on failure: nothing is created and failure is returned) through
/// `rewriter`, and verifies it (a verifier failure erases it again).
mlir::FailureOr<mlir::Operation *>
buildKilnOp(mlir::RewriterBase &rewriter, mlir::Location loc,
            llvm::StringRef name, mlir::ValueRange operands,
            llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
/// buildKilnOp for a single-result op; a null Value on failure.
mlir::Value buildKilnValue(mlir::RewriterBase &rewriter, mlir::Location loc,
                           llvm::StringRef name, mlir::ValueRange operands,
                           llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
/// The ops a rewrite builds before `anchor`, its insertion point. A pattern
/// whose building fails half way (an op whose inferred type or verifier
/// fails) returns `fail(...)`, which erases what it built since the scope
/// began, last first, and reports the match failure: a pattern that fails
/// must leave the IR as it found it.
class BuildScope {
public:
  BuildScope(mlir::RewriterBase &rewriter, mlir::Operation *anchor)
      : rewriter_(rewriter), anchor_(anchor), before_(anchor->getPrevNode()) {}
  /// Erases the ops built before the anchor since construction and returns
  /// the match failure of `op` with `why`.
  mlir::LogicalResult fail(mlir::Operation *op, const llvm::Twine &why);

private:
  mlir::RewriterBase &rewriter_;
  mlir::Operation *anchor_, *before_;
};

/// A kiln.constant holding `value`.
mlir::Value buildConstant(mlir::RewriterBase &rewriter, mlir::Location loc,
                          mlir::ElementsAttr value);
/// A 1-D i64 kiln.constant (shapes, axes).
mlir::Value buildI64Vector(mlir::RewriterBase &rewriter, mlir::Location loc,
                           llvm::ArrayRef<int64_t> values);
/// A rank-0 kiln.constant of float element type `elementType`.
mlir::Value buildFloatScalar(mlir::RewriterBase &rewriter, mlir::Location loc,
                             mlir::Type elementType, double value);

} // namespace passes
} // namespace kiln

#endif // KILN_PASSES_PASSDETAIL_H
