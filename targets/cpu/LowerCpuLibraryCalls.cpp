//===- LowerCpuLibraryCalls.cpp - The CPU target's lowering ---------------===//
//
// This file implements kiln-lower-cpu, the CPU target's lowering pass. It
// decides how every top-level step of a fused graph runs on the CPU, in the
// IR (passes/LoweringPasses.h): the ops of the library family (kiln.matmul,
// kiln.conv, kiln.conv_transpose) become kiln.library_call
// "runtime.<op>", a call of the runtime's OpenBLAS-backed kernel with the
// op's attributes as `params`; every other op outside a fusion is tagged
// kiln.reference = "cpu" (the runtime's reference kernel, called in place
// on the arena). Nothing is folded into the CPU library calls yet: the
// runtime's kernels have no epilogues or transposed operands (a oneDNN
// backend with post-ops would fold them here).
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/CpuTarget.h"
#include "ir/KilnOps.h"
#include "passes/FusionRules.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace {

/// The operand roles of a runtime library call of `op`.
SmallVector<StringRef> rolesOf(Operation *op) {
  if (isa<MatMulOp>(op))
    return {"a", "b"};
  return {"x", "w"};
}

struct LowerCpuPass
    : public PassWrapper<LowerCpuPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerCpuPass)

  StringRef getArgument() const final { return "kiln-lower-cpu"; }
  StringRef getDescription() const final {
    return "CPU target lowering: matmul and convolutions as calls of the "
           "runtime's OpenBLAS-backed kernels, reference steps";
  }
  void runOnOperation() override {
    func::FuncOp graph = getOperation();
    if (graph.isExternal())
      return;
    OpBuilder b(&getContext());
    for (Operation &op :
         llvm::make_early_inc_range(graph.getBody().front())) {
      if (isa<ConstantOp, FusionOp, LibraryCallOp, func::ReturnOp>(op))
        continue;
      if (!isLibraryOp(&op) || op.getNumOperands() != 2) {
        op.setAttr(kReferenceAttr, b.getStringAttr("cpu"));
        continue;
      }
      b.setInsertionPoint(&op);
      StringRef name = op.getName().getStringRef();
      name.consume_front("kiln.");
      auto call = b.create<LibraryCallOp>(
          op.getLoc(), op.getResultTypes(), op.getOperands(),
          b.getStringAttr("runtime." + name.str()),
          b.getStrArrayAttr(rolesOf(&op)), b.getBoolAttr(false),
          b.getBoolAttr(false), b.getStringAttr("none"),
          b.getI64IntegerAttr(0), op.getAttrDictionary());
      op.replaceAllUsesWith(call);
      op.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createLowerCpuPass() {
  return std::make_unique<LowerCpuPass>();
}

} // namespace kiln
