//===- WeightPreparation.cpp - Steps the wrapper runs once, at load -------===//
//
// This file implements the choice of the steps that the generated wrapper
// runs once, when the model is created, instead of on every run: the steps
// whose operands are all weights or results of such steps (casts and
// transposes of weights bound at load time with `--weights external`, which
// constant folding cannot see because their values are unknown at compile
// time). Their results go to memory the model owns, 256-byte aligned, for
// the model's lifetime. A step whose result is a graph output is not
// prepared (outputs are the caller's, per run), nor a transpose that the
// CUDA wrapper folds into cuBLASLt (it has no step). Every kiln op is pure
// (the dialect has no random or stateful op), so running a step early does
// not change what it computes.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperSupport.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {
namespace wrapper {

PreparedWeights planWeightPreparation(const MemoryPlan &plan, bool cuda,
                                      const BufferNames &buffers) {
  PreparedWeights p;
  for (Operation *op : plan.ops) {
    StepKind kind = classifyStep(op);
    if (kind == StepKind::Constant || kind == StepKind::Return ||
        op->getNumOperands() == 0 ||
        (cuda && isFoldedIntoCudaMatmuls(op, buffers)))
      continue;
    bool weightsOnly = llvm::all_of(op->getOperands(), [&](Value v) {
      return plan.at(v).kind == BufferKind::Weight || p.offsets.count(v);
    });
    bool noOutput = llvm::none_of(op->getResults(), [&](Value r) {
      return plan.at(r).kind == BufferKind::Output;
    });
    if (!weightsOnly || !noOutput)
      continue;
    p.ops.insert(op);
    for (Value r : op->getResults()) {
      p.bytes = (p.bytes + 255) / 256 * 256;
      p.offsets[r] = p.bytes;
      p.bytes += plan.at(r).bytes;
    }
  }
  return p;
}

} // namespace wrapper
} // namespace kiln
