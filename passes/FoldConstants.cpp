//===- FoldConstants.cpp - Evaluate ops on constant operands --------------===//
//
// This file implements `kiln-fold-constants`. What it does: every kiln op
// whose operands are all kiln.constant is computed with the runtime's
// reference kernels (ConstantEvaluator.h) and replaced by kiln.constant ops
// of exactly its result types; ops are visited in program order, so whole
// chains of constant computations fold; constants left without uses are
// erased. What it leaves alone: kiln.constant itself, ops inside kiln.fusion
// regions, ops with a dynamic result type, results of more than 16M
// elements, and ops the runtime cannot evaluate (the op stays as it was).
//
//===----------------------------------------------------------------------===//

#include "passes/ConstantEvaluator.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct FoldConstantsPass
    : public PassWrapper<FoldConstantsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldConstantsPass)

  StringRef getArgument() const final { return "kiln-fold-constants"; }
  StringRef getDescription() const final {
    return "Replace ops whose operands are all constants by constants "
           "computed with the runtime's kernels";
  }

  void runOnOperation() override {
    kiln::foldConstantOps(getOperation(), kiln::kMaxFoldElements);
  }
};
} // namespace

std::unique_ptr<Pass> kiln::createFoldConstantsPass() {
  return std::make_unique<FoldConstantsPass>();
}
