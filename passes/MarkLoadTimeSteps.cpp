//===- MarkLoadTimeSteps.cpp - Steps that run once, at load ---------------===//
//
// This file implements kiln-mark-load-time, the last pass before code
// generation: it tags with `kiln.load_time` the top-level steps of a graph
// whose operands are all weights or results of such steps (casts and
// transposes of weights bound at load time with `--weights external`, which
// constant folding cannot see because their values are unknown at compile
// time). The wrapper runs them once, in kiln_model_create, and the memory
// planner puts their results in memory the model owns. A step whose result
// is a graph output is left alone (outputs are the caller's, per run). Every
// kiln op is pure (the dialect has no random or stateful op), so running a
// step early does not change what it computes. It runs after the target's
// lowering, so a transpose folded into a library call has no step to tag.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"
#include "passes/PassDetail.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {

bool isPersistentValue(Value v, const llvm::DenseSet<Operation *> &loadTime) {
  return passes::isWeight(v) || loadTime.contains(v.getDefiningOp());
}

bool isAliasingView(Operation *op) {
  return isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op);
}

llvm::DenseSet<Operation *> collectLoadTimeOps(func::FuncOp graph) {
  llvm::DenseSet<Operation *> loadTime;
  if (graph.isExternal())
    return loadTime;
  for (Operation &op : graph.getBody().front()) {
    if (isa<ConstantOp, func::ReturnOp>(op) || op.getNumOperands() == 0)
      continue;
    bool weightsOnly = llvm::all_of(op.getOperands(), [&](Value v) {
      return isPersistentValue(v, loadTime);
    });
    bool isOutput = llvm::any_of(op.getUsers(), [](Operation *user) {
      return isa<func::ReturnOp>(user);
    });
    if (weightsOnly && !isOutput)
      loadTime.insert(&op);
  }
  return loadTime;
}

namespace {
struct MarkLoadTimeStepsPass
    : public PassWrapper<MarkLoadTimeStepsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkLoadTimeStepsPass)

  StringRef getArgument() const final { return "kiln-mark-load-time"; }
  StringRef getDescription() const final {
    return "Tag the steps that read only weights with kiln.load_time (the "
           "wrapper runs them once, when the model is created)";
  }
  void runOnOperation() override {
    func::FuncOp graph = getOperation();
    UnitAttr unit = UnitAttr::get(&getContext());
    for (Operation *op : collectLoadTimeOps(graph))
      op->setAttr(kLoadTimeAttr, unit);
  }
};
} // namespace

std::unique_ptr<Pass> createMarkLoadTimeStepsPass() {
  return std::make_unique<MarkLoadTimeStepsPass>();
}

} // namespace kiln
