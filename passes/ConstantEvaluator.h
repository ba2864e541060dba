//===- ConstantEvaluator.h - Evaluate kiln ops on constants -----*- C++ -*-===//
//
// This file declares the constant evaluator of the graph passes: a kiln op
// whose operands are all kiln.constant is computed with the runtime's
// reference kernels (kiln::Dispatcher), exactly as the ONNX tracer folds at
// trace time, so folding and execution cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CONSTANTEVALUATOR_H
#define KILN_PASSES_CONSTANTEVALUATOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln {

/// Results larger than this many elements are not folded.
constexpr int64_t kMaxFoldElements = int64_t(16) << 20;

/// Evaluates `op` (a kiln op other than kiln.constant, without regions,
/// whose operands are all kiln.constant) with the runtime's kernels. Returns
/// one attribute per result, each of exactly the result's type; failure when
/// the op does not qualify, a result has a dynamic type or more than
/// `maxElements` elements, or the kernel reports an error. With
/// `refineTypes` (the tracer's trace-time folding), a result may have a
/// dynamic type: the attribute then has the computed static type, which
/// agrees with the declared one on every static dimension. Emits nothing.
mlir::FailureOr<llvm::SmallVector<mlir::DenseElementsAttr>>
evaluateOnConstants(mlir::Operation *op,
                    int64_t maxElements = kMaxFoldElements,
                    bool refineTypes = false);

/// Replaces every op under `root` (outside kiln.fusion regions) that
/// evaluateOnConstants can compute by kiln.constant ops, in program order so
/// chains fold, and erases the constants left without uses. Returns the
/// number of ops folded.
unsigned foldConstantOps(mlir::Operation *root,
                         int64_t maxElements = kMaxFoldElements);

} // namespace kiln

#endif // KILN_PASSES_CONSTANTEVALUATOR_H
